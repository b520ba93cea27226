//! What a JSON input may make pgiosim hold in memory, bounded while it is
//! read.
//!
//! An input file is bounded in bytes (see [`crate::input`]), but a byte of
//! JSON can cost far more than a byte in memory: `1,` is a 32-byte
//! `serde_json::Value`, `{"t":1},` a 72-byte point of a series. So the
//! readers of large inputs (results and sweeps for `compare` and `report`,
//! fio output) deserialize straight into their structs, skip what they do not
//! use without building it, and charge every list entry and every kept JSON
//! value to one budget per input, [`within`]: past it, the input is refused
//! while it is read, before the memory is taken.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// What one input may hold in memory, as charged here. A `BTreeMap` or a
/// growing `Vec` takes up to about twice its charge, so with the input's
/// own text (at most 256 MiB) the reader stays under 1 GB; the largest
/// result pgiosim writes (a series of `SERIES_MAX_POINTS` points) is
/// charged about 20 MiB.
pub const INPUT_BUDGET_BYTES: usize = 256 << 20;

/// The charge of one JSON value kept as a `serde_json::Value`.
const VALUE_BYTES: usize = std::mem::size_of::<Value>();
/// The charge of one entry of a kept object beyond its key and value: its
/// share of the map's node.
const ENTRY_BYTES: usize = 32;

thread_local! {
    /// Bytes the input being read may still take, and its whole budget;
    /// unbounded outside [`within`].
    static LEFT: Cell<usize> = const { Cell::new(usize::MAX) };
    static BUDGET: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// Runs `read` (a deserialization) with `bytes` to spend on what it keeps.
pub fn within<R>(bytes: usize, read: impl FnOnce() -> R) -> R {
    struct Restore(usize, usize);
    impl Drop for Restore {
        fn drop(&mut self) {
            LEFT.with(|l| l.set(self.0));
            BUDGET.with(|b| b.set(self.1));
        }
    }
    let _restore = Restore(LEFT.with(Cell::get), BUDGET.with(Cell::get));
    LEFT.with(|l| l.set(bytes));
    BUDGET.with(|b| b.set(bytes));
    read()
}

/// Takes `bytes` from the budget, or fails naming it.
fn charge<E: de::Error>(bytes: usize) -> Result<(), E> {
    LEFT.with(|l| match l.get().checked_sub(bytes) {
        Some(left) => {
            l.set(left);
            Ok(())
        }
        None => Err(E::custom(format!(
            "holds more than pgiosim keeps in memory of one input ({} MiB of figures); it is not a file pgiosim wrote",
            BUDGET.with(Cell::get) >> 20
        ))),
    })
}

/// A list of at most `MAX` entries, each charged to the budget; for
/// `#[serde(deserialize_with = "crate::json_memory::vec::<_, _, MAX>")]`.
pub fn vec<'de, D, T, const MAX: usize>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct V<T, const MAX: usize>(PhantomData<T>);
    impl<'de, T: Deserialize<'de>, const MAX: usize> Visitor<'de> for V<T, MAX> {
        type Value = Vec<T>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            write!(f, "a list of at most {MAX} entries")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
            let mut out = Vec::new();
            loop {
                charge::<A::Error>(std::mem::size_of::<T>())?;
                let Some(x) = seq.next_element()? else {
                    return Ok(out);
                };
                if out.len() == MAX {
                    return Err(de::Error::custom(format!(
                        "a list of more than {MAX} entries, more than pgiosim writes"
                    )));
                }
                out.push(x);
            }
        }
    }
    d.deserialize_seq(V::<T, MAX>(PhantomData))
}

/// A map by name, its entries charged to the budget; for
/// `#[serde(deserialize_with = "crate::json_memory::map")]`.
pub fn map<'de, D, T>(d: D) -> Result<BTreeMap<String, T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct V<T>(PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
        type Value = BTreeMap<String, T>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a map")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = BTreeMap::new();
            while let Some(k) = map.next_key::<String>()? {
                charge::<A::Error>(ENTRY_BYTES + std::mem::size_of::<(String, T)>() + k.len())?;
                let v = map.next_value()?;
                out.insert(k, v);
            }
            Ok(out)
        }
    }
    d.deserialize_map(V(PhantomData))
}

/// Any JSON value, every part of it charged to the budget.
pub fn value<'de, D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
    Kept { keep: &|_| true }.deserialize(d)
}

/// [`value`], null read as absent.
pub fn opt_value<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Ok(Some(value(d)?).filter(|v| !v.is_null()))
}

/// A JSON value whose objects keep only the keys `keep` accepts: the others'
/// values are skipped without being built. Everything kept is charged.
#[derive(Clone, Copy)]
pub struct Kept<'k> {
    pub keep: &'k dyn Fn(&str) -> bool,
}

impl<'de> DeserializeSeed<'de> for Kept<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Kept<'_> {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Value, E> {
        charge::<E>(VALUE_BYTES)?;
        Ok(Value::Bool(b))
    }
    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Value, E> {
        charge::<E>(VALUE_BYTES)?;
        Ok(Value::from(n))
    }
    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Value, E> {
        charge::<E>(VALUE_BYTES)?;
        Ok(Value::from(n))
    }
    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Value, E> {
        charge::<E>(VALUE_BYTES)?;
        Ok(Value::from(n))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Value, E> {
        charge::<E>(VALUE_BYTES + s.len())?;
        Ok(Value::String(s.to_string()))
    }
    fn visit_string<E: de::Error>(self, s: String) -> Result<Value, E> {
        charge::<E>(VALUE_BYTES + s.len())?;
        Ok(Value::String(s))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        charge::<E>(VALUE_BYTES)?;
        Ok(Value::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        self.visit_unit()
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        self.deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        charge::<A::Error>(VALUE_BYTES)?;
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(self)? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        charge::<A::Error>(VALUE_BYTES)?;
        let mut out = Map::new();
        while let Some(k) = map.next_key::<String>()? {
            if (self.keep)(&k) {
                charge::<A::Error>(ENTRY_BYTES + std::mem::size_of::<String>() + k.len())?;
                let v = map.next_value_seed(self)?;
                out.insert(k, v);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Doc {
        #[serde(deserialize_with = "vec::<_, _, 3>")]
        list: Vec<u64>,
        #[serde(default, deserialize_with = "value")]
        any: Value,
    }

    fn read(text: &str, budget: usize) -> Result<Doc, String> {
        within(budget, || serde_json::from_str::<Doc>(text)).map_err(|e| e.to_string())
    }

    #[test]
    fn a_list_longer_than_its_bound_is_refused() {
        assert_eq!(
            read(r#"{"list":[1,2,3]}"#, 1 << 20).unwrap().list,
            [1, 2, 3]
        );
        let e = read(r#"{"list":[1,2,3,4]}"#, 1 << 20).err().unwrap();
        assert!(e.contains("more than 3 entries"), "{e}");
    }

    #[test]
    fn values_past_the_budget_are_refused_while_read() {
        let small = r#"{"list":[],"any":{"a":[1,2,{"b":"c"}]}}"#;
        assert_eq!(read(small, 1 << 20).unwrap().any["a"][2]["b"], "c");
        let many = format!(r#"{{"list":[],"any":[{}1]}}"#, "1,".repeat(1000));
        let e = read(&many, 1000 * VALUE_BYTES).err().unwrap();
        assert!(e.contains("holds more than pgiosim keeps in memory"), "{e}");
        assert!(read(&many, 1002 * VALUE_BYTES + 8).is_ok());
    }

    #[test]
    fn the_budget_is_restored_after_a_read() {
        let _ = read(r#"{"list":[1]}"#, 10);
        assert_eq!(LEFT.with(Cell::get), usize::MAX);
    }

    #[test]
    fn kept_skips_the_keys_it_does_not_keep() {
        let keep = |k: &str| k != "bins";
        let mut de = serde_json::Deserializer::from_str(r#"{"a":{"bins":[1,2,3],"n":1}}"#);
        let v = within(1 << 20, || Kept { keep: &keep }.deserialize(&mut de)).unwrap();
        assert_eq!(v, serde_json::json!({"a": {"n": 1}}));
    }
}
