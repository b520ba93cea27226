//! Reading workload files: the one place under `workload/` that touches the
//! file system, once at start-up (the generator itself stays pure).

use std::path::Path;

use anyhow::{Context, Result, bail};

use super::{BUILTIN, WorkloadSpec, builtin};

/// A workload by built-in name or path to a workload file.
pub fn load_spec(name_or_path: &str) -> Result<WorkloadSpec> {
    if let Some(s) = builtin(name_or_path) {
        return Ok(s);
    }
    let path = Path::new(name_or_path);
    if !path.exists() {
        let names: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
        let hint = crate::error::nearest(name_or_path, &names)
            .map(|n| format!("; did you mean {n:?}?"))
            .unwrap_or_default();
        bail!(
            "no built-in workload or file named {name_or_path:?}; built-in: {}{hint}",
            names.join(", ")
        );
    }
    let text = crate::input::read_text(path, "workload file", crate::input::SMALL_FILE_MAX_BYTES)?;
    WorkloadSpec::from_json(&text, &path.display().to_string()).map_err(crate::error::bad_input)
}

/// The largest `-b name@WEIGHT`, pgbench's (`INT_MAX`): weights are
/// summed and divided, and two of 1e308 summed to infinity, which ran only
/// the last script.
pub const WEIGHT_MAX: f64 = 2_147_483_647.0;

/// Parse pgbench's `-b name[@weight]` arguments into (spec, weight) parts.
pub fn parse_mix(items: &[String]) -> Result<Vec<(WorkloadSpec, f64)>> {
    items
        .iter()
        .map(|item| {
            let (name, weight) = match item.rsplit_once('@') {
                Some((n, w)) => {
                    let w: f64 = w
                        .parse()
                        .ok()
                        .filter(|w: &f64| w.is_finite() && *w > 0.0 && *w <= WEIGHT_MAX)
                        .with_context(|| {
                            format!(
                                "-b {item}: the weight after @ must be a number greater than 0 \
                                 and at most {WEIGHT_MAX}"
                            )
                        })?;
                    (n, w)
                }
                None => (item.as_str(), 1.0),
            };
            let spec = load_spec(name).with_context(|| format!("-b {item}"))?;
            Ok((spec, weight))
        })
        .collect()
}
