//! Naming a device: the one place a device's name is resolved to the
//! profile the model runs, whichever flag gives it (`--device`, `--emulate`,
//! `--base`, a standby's `device=`, a sweep's `--device` list): a shipped
//! profile, a provisioned volume (`gp3:iops=16000,mibps=1000`, see
//! [`crate::device::provisioned`]), an instance's own store
//! (`instance-store:type=m6id.4xlarge`, or the size alone, see
//! [`crate::device::instance`]), or a profile file; and `--device` read against
//! `--instance` (its store, its volume limits). Commands resolve names while
//! they plan, so a bad one is refused before any file is locked or written.
//!
//! It reads both the profiles and the instance presets, so that neither
//! imports the other to name a device: `instance` builds on `profile`.

use std::path::Path;

use anyhow::Result;

use crate::device::instance::server::HostLimits;
use crate::device::instance::{self, Instance, local_ssd};
use crate::device::profile::{self, Profile};
use crate::device::provisioned;
use crate::error::usage;

/// The `--device` name of an instance's local store.
pub const INSTANCE_STORE: &str = "instance-store";

/// The instance presets with a store, for messages: their families and sizes.
fn store_sizes() -> String {
    let with: Vec<&Instance> = instance::instances()
        .iter()
        .filter(|i| i.store.is_some())
        .collect();
    let mut families: Vec<String> = with.iter().map(|i| i.family()).collect();
    families.dedup();
    format!(
        "{} ({} sizes, e.g. m6id.4xlarge)",
        families.join(", "),
        with.len()
    )
}

/// Why `inst` has no store profile: none at all, or a local disk no one
/// has measured.
fn no_store(inst: &Instance) -> String {
    match inst.unmeasured_disk {
        Some(d) => format!(
            "{}'s local NVMe ({} × {} GB) has no measurement, so no store profile: give \
             --device hetzner-nvme (a stand-in, see its source) or a profile measured on the \
             server (pgiosim calibrate, profile from-fio)",
            inst.name, d.volumes, d.volume_gb
        ),
        None => format!("{} has no instance store", inst.name),
    }
}

/// A device named on the command line without a file: a shipped profile's
/// name, a provisioned volume or an instance's store. None when `arg` is
/// none of these (then it may be a file); an error names what is wrong with
/// a provisioning.
pub fn lookup(arg: &str) -> Option<std::result::Result<Profile, String>> {
    if let Some(p) = Profile::shipped(arg) {
        return Some(Ok(p));
    }
    if arg == INSTANCE_STORE {
        return Some(Err(format!(
            "{INSTANCE_STORE} is the instance's own disk: give --instance SIZE, or write \
             {INSTANCE_STORE}:type=SIZE (sizes with a store: {})",
            store_sizes()
        )));
    }
    if let Some(req) = local_ssd::parse(arg) {
        return Some(req.and_then(|r| local_ssd_profile(r.count, r.machine_type).map(|p| p.0)));
    }
    if let Some(rest) = arg.strip_prefix("instance-store:") {
        let size = rest.strip_prefix("type=").unwrap_or(rest).trim();
        return Some(instance_store(size));
    }
    // An instance size names its store ("--device m6id.4xlarge").
    if instance::lookup(arg).is_some() {
        return Some(instance_store(arg));
    }
    if let Some(array) = crate::device::raid0::parse(arg, lookup) {
        return Some(array);
    }
    provisioned::parse(arg, Profile::shipped)
}

/// The instance store of the instance preset `size`, with the `nvme`
/// profile's latencies.
pub fn instance_store(size: &str) -> std::result::Result<Profile, String> {
    let Some(inst) = instance::lookup(size) else {
        return Err(format!(
            "{INSTANCE_STORE}: {size:?} is not an instance preset with a store; sizes: {}",
            store_sizes()
        ));
    };
    let base = Profile::shipped("nvme").expect("nvme is shipped");
    inst.store_profile(&base).ok_or_else(|| {
        format!(
            "{INSTANCE_STORE}: {}; sizes with one: {}",
            no_store(inst),
            store_sizes()
        )
    })
}

/// `count` GCP Local SSD disks on `machine_type`, with the `nvme` profile's
/// latencies, and the notice when the type has too few vCPUs for Google's
/// limits ([`local_ssd::profile`]).
fn local_ssd_profile(
    count: u32,
    machine_type: Option<&str>,
) -> std::result::Result<(Profile, Option<String>), String> {
    let base = Profile::shipped("nvme").expect("nvme is shipped");
    local_ssd::profile(&base, count, machine_type)
}

/// What `flag` (`--device`, `--emulate`, `--base`, ...) takes: a name
/// [`lookup`] knows, or a profile JSON file. Errors name the flag, and for a
/// bad file its path and field; all are bad input (exit code 2).
pub fn resolve(flag: &str, arg: &str) -> Result<Profile> {
    resolve_as(arg, &format!("{flag} {arg}"), &format!("{flag}: "))
}

/// `arg` as [`resolve`] reads it; a bad name's error starts with `named`
/// (the name as the user wrote it, `--device gp3` or `device=gp3`), a bad
/// file's with `file_prefix` (`--device: `, `device=`) before the file's
/// own error, which names its path.
pub fn resolve_as(arg: &str, named: &str, file_prefix: &str) -> Result<Profile> {
    if let Some(p) = lookup(arg) {
        return p.map_err(|e| usage(format!("{named}: {e}")));
    }
    let path = Path::new(arg);
    if path.exists() {
        return Profile::load(path).map_err(|e| usage(format!("{file_prefix}{e:#}")));
    }
    Err(usage(format!(
        "{named}: no such shipped profile or file; shipped: {}{}",
        profile::shipped_names().join(", "),
        profile::did_you_mean(arg)
    )))
}

/// A `--device` argument's profile (see [`resolve`]).
pub fn load_profile(arg: &str) -> Result<Profile> {
    resolve("--device", arg)
}

/// The preset `--instance NAME` names.
pub fn instance_preset(name: Option<&str>) -> Result<Option<&'static Instance>> {
    match name {
        None => Ok(None),
        Some(name) => Ok(Some(instance::lookup(name).ok_or_else(|| {
            usage(format!(
                "--instance {name}: not a preset; see `pgiosim instances` (e.g. m6id.4xlarge, \
                 r6i.2xlarge, Standard_D16s_v5, n2-standard-16)"
            ))
        })?)),
    }
}

/// The device `model` runs on: --device, resolved against --instance.
pub fn model_device(
    device: Option<&str>,
    inst: Option<&'static Instance>,
    limits: Option<&HostLimits>,
    quiet: bool,
) -> Result<Profile> {
    // The server's limits on its network volumes: --volume-limits, else
    // the preset's.
    let preset_limits = inst.and_then(|i| i.host_limits());
    let limits = limits.or(preset_limits.as_ref());
    let Some(i) = inst else {
        return device_alone(device, limits, quiet);
    };
    match device {
        None | Some(INSTANCE_STORE) => preset_store(i),
        // Local SSD attached to this machine type (or the one it names).
        Some(d) if local_ssd::parse(d).is_some() => {
            let named = |e: String| usage(format!("--device {d}: {e}"));
            let req = local_ssd::parse(d).expect("checked").map_err(named)?;
            let (p, notice) =
                local_ssd_profile(req.count, Some(req.machine_type.unwrap_or(i.name)))
                    .map_err(named)?;
            if let Some(n) = notice.filter(|_| !quiet) {
                eprintln!("notice: --device {d}: {n}");
            }
            Ok(p)
        }
        // Another size's store, or the store named by its size: no volume
        // limits apply to a local disk.
        Some(d) if d.starts_with("instance-store:") || instance::lookup(d).is_some() => {
            load_profile(d)
        }
        Some(d) => volume_on_instance(d, i, limits, quiet),
    }
}

/// --device (nvme by default) with no --instance: `limits` apply to a
/// network volume only.
fn device_alone(device: Option<&str>, limits: Option<&HostLimits>, quiet: bool) -> Result<Profile> {
    let p = load_profile(device.unwrap_or("nvme"))?;
    Ok(match (limits, device.and_then(provisioned::type_of)) {
        (Some(h), Some(t)) => limited(h, t.name, p, quiet),
        (Some(_), _) => {
            if !quiet {
                eprintln!(
                    "notice: --volume-limits: {} is not a network volume; the limits are \
                     not applied to it",
                    device.unwrap_or("nvme")
                );
            }
            p
        }
        (None, _) => p,
    })
}

/// The instance store of preset `i`, or why it has none to model.
fn preset_store(i: &Instance) -> Result<Profile> {
    let base = Profile::shipped("nvme").expect("nvme is shipped");
    i.store_profile(&base)
        .ok_or_else(|| match i.unmeasured_disk {
            Some(_) => usage(format!("--instance {}: {}", i.name, no_store(i))),
            None => usage(format!(
                "--instance {}: has no instance store; give --device, e.g. {}",
                i.name,
                match i.provider {
                    instance::Provider::Aws => {
                        "gp3 or gp3:iops=6000,mibps=250 for an EBS volume"
                    }
                    instance::Provider::Azure => "azure-premium-ssd:tier=p30",
                    instance::Provider::Gcp => "pd-balanced:size_gib=500",
                    instance::Provider::Hetzner => "hetzner-volume",
                }
            )),
        })
}

/// Volume `d` attached to preset `i`: of `i`'s provider, under the
/// server's `limits`; another provider's is refused.
fn volume_on_instance(
    d: &str,
    i: &Instance,
    limits: Option<&HostLimits>,
    quiet: bool,
) -> Result<Profile> {
    let p = load_profile(d)?;
    match provisioned::type_of(d) {
        Some(t) if t.provider == i.provider.name() => {
            if let Some(why) = unsupported(i, t.name)
                && !quiet
            {
                eprintln!(
                    "notice: --device {d}: {} takes Hyperdisk only ({why})",
                    i.name
                );
            }
            Ok(match limits {
                Some(h) => limited(h, t.name, p, quiet),
                None => p,
            })
        }
        Some(t) => Err(usage(format!(
            "--device {d} is an {} volume, --instance {} a {} server: choose a \
             volume of the same provider",
            t.provider,
            i.name,
            i.provider.name()
        ))),
        None => {
            if !quiet {
                eprintln!(
                    "notice: --device {d} is not one of {}'s volume types: the \
                     instance's volume limits are not applied to it",
                    i.provider.name()
                );
            }
            Ok(p)
        }
    }
}

/// Why GCP preset `i` does not take disk type `disk_type` (C4, N4 and C4A
/// take Hyperdisk only), if it does not.
fn unsupported(i: &Instance, disk_type: &str) -> Option<&'static str> {
    (i.provider == instance::Provider::Gcp)
        .then(|| {
            instance::gcp_vm_limits::unsupported(
                instance::gcp_vm_limits::series_of(i.name),
                disk_type,
            )
        })
        .flatten()
}

/// Volume `p` of provisioned type `disk_type` under the server's limits
/// `h`; unchanged, with a notice, where the server has none for that type
/// (GCP's Hyperdisk Balanced).
fn limited(h: &HostLimits, disk_type: &str, p: Profile, quiet: bool) -> Profile {
    match instance::server::limit_volume(h, disk_type, &p) {
        Ok(limited) => limited,
        Err(why) => {
            if !quiet {
                eprintln!("notice: {why}: the volume is modelled with its own caps only");
            }
            p
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_or_a_file_and_errors_name_the_flag() {
        assert_eq!(load_profile("gp3").unwrap().name, "gp3");
        let e = format!("{:#}", load_profile("floppy").unwrap_err());
        assert!(
            e.starts_with("--device floppy: no such shipped profile or file; shipped: ")
                && e.contains("gp3")
                && e.contains("nvme"),
            "{e}"
        );
        let e = format!("{:#}", resolve("--base", "nvm").unwrap_err());
        assert!(
            e.starts_with("--base nvm: ") && e.ends_with("did you mean \"nvme\"?"),
            "{e}"
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mine.json");
        let mut p = Profile::shipped("nvme").unwrap();
        p.name = "mine".to_string();
        std::fs::write(&path, p.to_json().to_string()).unwrap();
        assert_eq!(load_profile(path.to_str().unwrap()).unwrap(), p);
        // A bad file: the flag, then the file's own error with its path.
        std::fs::write(&path, "{}").unwrap();
        let e = format!(
            "{:#}",
            resolve("--emulate", path.to_str().unwrap()).unwrap_err()
        );
        assert!(
            e.starts_with(&format!("--emulate: {}", path.display())),
            "{e}"
        );
    }

    #[test]
    fn a_bad_emulate_argument_names_the_flag() {
        let e = resolve("--emulate", "floppy").unwrap_err();
        assert_eq!(crate::error::exit_code(&e), crate::error::exit::BAD_INPUT);
        let e = format!("{e:#}");
        assert!(e.contains("--emulate floppy") && e.contains("gp3"), "{e}");
        assert_eq!(resolve("--emulate", "gp3").unwrap().name, "gp3");
    }

    #[test]
    fn an_instance_size_names_its_store() {
        let by_size = lookup("m6id.4xlarge").unwrap().unwrap();
        let by_key = lookup("instance-store:type=m6id.4xlarge").unwrap().unwrap();
        assert_eq!(by_size, by_key);
        let e = lookup(INSTANCE_STORE).unwrap().unwrap_err();
        assert!(e.contains("give --instance SIZE"), "{e}");
        assert!(lookup("r6i.2xlarge").unwrap().is_err(), "no store");
        assert!(lookup("floppy").is_none());
        // Beyond AWS: an Azure L-series size's local NVMe, measured.
        let az = lookup("instance-store:type=Standard_L16s_v4")
            .unwrap()
            .unwrap();
        assert_eq!(az.caps.read_iops, Some(1098789.0));
        let inst = instance_preset(Some("Standard_L16s_v4")).unwrap();
        assert_eq!(model_device(None, inst, None, true).unwrap(), az);
        // Hetzner's local disk is known but not measured: said so.
        let e = lookup("ccx33").unwrap().unwrap_err();
        assert!(
            e.contains("ccx33's local NVMe (1 × 246 GB) has no measurement"),
            "{e}"
        );
        let inst = instance_preset(Some("ccx33")).unwrap();
        let e = format!("{:#}", model_device(None, inst, None, true).unwrap_err());
        assert!(e.contains("hetzner-nvme"), "{e}");
        let e = lookup(INSTANCE_STORE).unwrap().unwrap_err();
        assert!(e.contains("Lsv4") && e.contains("Lasv3"), "{e}");
    }
}
