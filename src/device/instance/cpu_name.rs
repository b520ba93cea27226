//! `--cpu NAME`: a CPU class by its key (`xeon-8375c`) or by the processor's
//! name as lscpu, /proc/cpuinfo or a provider's page prints it ("Intel(R)
//! Xeon(R) Platinum 8375C CPU @ 2.90GHz", "AMD EPYC 9454P 48-Core
//! Processor"), so a user can paste what their server says.

use super::cpu_class::{CpuClass, cpu_classes};

/// The words of a name, lower case, with trademarks and punctuation gone:
/// "Intel(R) Xeon(R) Platinum 8375C" → intel, xeon, platinum, 8375c.
fn words(s: &str) -> Vec<String> {
    s.to_ascii_lowercase()
        .replace("(r)", " ")
        .replace("(tm)", " ")
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// The class `name` means: its key (case-insensitive), or the one class
/// whose key's words (xeon, 8375c) all appear in `name`. A class key may
/// name two processors (`xeon-8175m-8259cl`): then its model numbers are
/// alternatives and one of them, with the family word, is enough. None
/// when no class or more than one matches.
pub fn find(name: &str) -> Option<&'static CpuClass> {
    let given = words(name);
    if given.is_empty() {
        return None;
    }
    if let Some(c) = cpu_classes()
        .iter()
        .find(|c| c.key.eq_ignore_ascii_case(name.trim()))
    {
        return Some(c);
    }
    let matches: Vec<&'static CpuClass> = cpu_classes()
        .iter()
        .filter(|c| {
            let key = words(c.key);
            let (family, models): (Vec<&String>, Vec<&String>) = key
                .iter()
                .partition(|w| !w.chars().any(|ch| ch.is_ascii_digit()));
            let family_ok = family.iter().all(|w| given.contains(w));
            // A class without a model number (graviton2 is one word with
            // its digit) matches on that word alone.
            let model_ok =
                models.is_empty() && !family.is_empty() || models.iter().any(|m| given.contains(m));
            family_ok && model_ok
        })
        .collect();
    match matches.as_slice() {
        [one] => Some(one),
        // One processor measured on two families (xeon-8370c and
        // xeon-8370c-lsv3): the class whose key's words all appear.
        [_, _, ..] => {
            let whole: Vec<&&CpuClass> = matches
                .iter()
                .filter(|c| words(c.key).iter().all(|w| given.contains(w)))
                .collect();
            match whole.as_slice() {
                [one] => Some(**one),
                _ => None,
            }
        }
        [] => None,
    }
}

/// [`find`], else the one class whose processor name holds every word of
/// `name` ("Neoverse-V2", as lscpu prints a Graviton4 or any other V2
/// core): the bool is true when the name, not the key, decided, so the
/// caller can say which class it took. None when no class or more than one
/// has those words (Neoverse-N1 is Graviton2's and Ampere Altra's).
pub fn resolve(name: &str) -> Option<(&'static CpuClass, bool)> {
    if let Some(c) = find(name) {
        return Some((c, false));
    }
    let given = words(name);
    if given.is_empty() {
        return None;
    }
    let by_name: Vec<&'static CpuClass> = cpu_classes()
        .iter()
        .filter(|c| {
            let n = words(c.name);
            given.iter().all(|w| n.contains(w))
        })
        .collect();
    match by_name.as_slice() {
        [one] => Some((one, true)),
        _ => None,
    }
}

/// The one-line error for an unknown `--cpu`, listing the keys.
pub fn unknown(name: &str) -> String {
    let keys: Vec<&str> = cpu_classes().iter().map(|c| c.key).collect();
    format!(
        "--cpu {name}: no such CPU class; give a key or the processor's name as lscpu prints \
         it (see `pgiosim cpus`): {}",
        keys.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_processor_names_find_their_class() {
        let key = |n: &str| find(n).map(|c| c.key);
        assert_eq!(key("xeon-8375c"), Some("xeon-8375c"));
        assert_eq!(key("XEON-8375C"), Some("xeon-8375c"));
        assert_eq!(
            key("Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz"),
            Some("xeon-8375c")
        );
        assert_eq!(key("AMD EPYC 9454P 48-Core Processor"), Some("epyc-9454p"));
        assert_eq!(
            key("Intel(R) Xeon(R) Platinum 8259CL CPU @ 2.50GHz"),
            Some("xeon-8175m-8259cl")
        );
        assert_eq!(key("graviton3"), Some("graviton3"));
        // The other providers' processors as lscpu named them in Spare
        // Cores' dataset (cpus.tsv).
        for (lscpu, class) in [
            (
                "Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz",
                "xeon-8370c",
            ),
            ("INTEL(R) XEON(R) PLATINUM 8573C", "xeon-8573c"),
            ("AMD EPYC 7763 64-Core Processor", "epyc-7763"),
            ("AMD EPYC 9V74 80-Core Processor", "epyc-9v74"),
            ("AMD EPYC 7B13", "epyc-7b13"),
            (
                "Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz",
                "xeon-8481c",
            ),
            ("AMD EPYC-Milan Processor", "epyc-milan"),
            ("AMD EPYC-Genoa Processor", "epyc-genoa"),
            ("Intel(R) Xeon(R) Platinum 8488C", "xeon-8488c"),
            ("AMD EPYC 9R14", "epyc-9r14"),
        ] {
            assert_eq!(key(lscpu), Some(class), "{lscpu}");
        }
        assert_eq!(
            key("INTEL(R) XEON(R) PLATINUM 8581C CPU @ 2.30GHz"),
            Some("xeon-8581c")
        );
        // Neoverse-N1 is Graviton2 and Hetzner's CAX alike: no guess.
        assert_eq!(key("Neoverse-N1"), None);
        // Not a class: no guess.
        assert_eq!(key("Intel Xeon E5-2680 v4"), None);
        assert_eq!(key("AMD EPYC"), None);
        assert_eq!(key(""), None);
        assert!(unknown("z80").starts_with("--cpu z80: no such CPU class"));
    }

    #[test]
    fn a_core_name_with_one_class_resolves_to_it_and_says_so() {
        let (c, by_name) = resolve("Neoverse-V2").unwrap();
        assert_eq!((c.key, by_name), ("graviton4", true));
        assert_eq!(
            resolve("xeon-8375c").map(|(c, n)| (c.key, n)),
            Some(("xeon-8375c", false))
        );
        // GCP n4's lscpu names no model; its class's name has the words.
        let (c, by_name) = resolve("GENUINE INTEL(R) 0000").unwrap();
        assert_eq!((c.key, by_name), ("xeon-n4", true));
        // Two classes of that core: no guess.
        assert!(resolve("Neoverse-N1").is_none());
        assert!(resolve("Pentium").is_none());
    }

    #[test]
    fn every_class_is_found_by_its_own_key_and_name() {
        for c in cpu_classes() {
            assert_eq!(find(c.key).map(|f| f.key), Some(c.key));
        }
    }
}
