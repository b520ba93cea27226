//! The course of a one-shot command (`vacuum`, `catchup`): its plan
//! checked, its job built from the plan, the device (the model, or the
//! files on this disk, prepared and locked outside any timing), the job
//! driven to its end and its result built from the database. The command
//! parses and checks its flags, and renders the result.

use anyhow::Result;

use super::open_device;
use crate::core::config::CoreConfig;
use crate::core::database::Database;
use crate::core::workload::Workload;
use crate::datafiles::{self, Layout};
use crate::device::model::DeviceModel;
use crate::engine::Device;
use crate::engine::driver::{self, Ending};
use crate::engine::sim::SimDevice;
use crate::output::progress_bar_wanted;
use crate::plan::{RunPlan, RunShape, Target, layout_for};
use crate::report::one_shot::{DiskCounters, OneShotRun};
use crate::settings::Settings;
use crate::stop::Stop;
use crate::workload::Script;

/// What a one-shot command asks to run.
pub struct OneShot {
    /// The run it is checked as: one client, whose job the command's
    /// replaces.
    pub shape: RunShape,
    pub settings: Settings,
    pub target: Target,
    /// What the result calls the device: `--device` as given, else the
    /// I/O engine's name.
    pub device: Option<String>,
    /// Print nothing but the result.
    pub quiet: bool,
}

/// The job the database runs, built from the checked plan.
pub struct Job {
    pub workload: Box<dyn Workload>,
    /// I/Os it may keep in flight on the disk.
    pub max_in_flight: u32,
    /// With `--buffered` on the disk, its files leave the page cache
    /// first, as after a restart.
    pub cold_cache: bool,
}

/// Run `o`'s plan: `job` builds what the database runs from the plan's
/// script, settings and configuration (after the plan's own checks), and
/// `result` reads the database once the job is done or interrupted.
pub fn one_shot<R>(
    o: OneShot,
    stop: &Stop,
    job: impl FnOnce(Script, &Settings, &CoreConfig) -> Result<Job>,
    result: impl FnOnce(&Database, &Settings, OneShotRun) -> R,
) -> Result<R> {
    let plan = RunPlan::new(o.shape, o.settings, o.target)?;
    let (settings, cfg, target) = (plan.settings, plan.cfg, plan.target);
    let job = job(plan.workload, &settings, &cfg)?;
    let layout = layout_for(job.workload.as_ref(), plan.scale);
    // The data set's lock (on the disk) is held until the job is done.
    let (mode, mut dev, _held) = device(&target, &layout, &job, cfg.seed, o.quiet, stop)?;
    let device = o.device.unwrap_or_else(|| dev.name().to_string());
    let data_path = match &target {
        Target::Disk(disk) => Some(disk.data.data_path()),
        Target::Model(_) => None,
    };
    let disk_before = data_path.as_deref().and_then(disk_counters);
    let mut db = Database::new(cfg, job.workload);
    let (ending, _) = driver::drive(&mut db, dev.as_mut(), stop, None, &mut |_| {})?;
    let disk = disk_before.and_then(|before| {
        let after = disk_counters(data_path.as_deref()?)?;
        Some(after.since(&before))
    });
    let run = OneShotRun {
        mode,
        device,
        partial: ending == Ending::Interrupted,
        disk,
    };
    Ok(result(&db, &settings, run))
}

/// The job's device, "model" or "run", and on the disk the data set's
/// lock: the model of `target`'s profile, or the files of `layout` on the
/// disk, locked and prepared (outside any timing).
fn device(
    target: &Target,
    layout: &Layout,
    job: &Job,
    seed: u64,
    quiet: bool,
    stop: &Stop,
) -> Result<(
    &'static str,
    Box<dyn Device>,
    Option<datafiles::DataSetLock>,
)> {
    match target {
        Target::Model(profile) => Ok((
            "model",
            Box::new(SimDevice::new(DeviceModel::new(profile, seed))),
            None,
        )),
        Target::Disk(disk) => {
            let held = datafiles::lock(&disk.data)?;
            datafiles::prepare_locked(&disk.data, layout, progress_bar_wanted(quiet), &held, stop)?;
            if job.cold_cache && disk.buffered {
                datafiles::drop_from_page_cache(&disk.data, layout);
            }
            let dev = open_device(disk, layout, &[], job.max_in_flight, true)?;
            Ok(("run", dev, Some(held)))
        }
    }
}

/// The disk under `file` and its /proc/diskstats counters (Linux; None
/// where they cannot be read).
fn disk_counters(file: &std::path::Path) -> Option<DiskCounters> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(file).ok()?.dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let mut sys = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    if sys.join("partition").exists() {
        sys.pop();
    }
    let name = sys.file_name()?.to_str()?.to_string();
    let stats = std::fs::read_to_string("/proc/diskstats").ok()?;
    stats.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.len() > 9 && f[2] == name).then(|| DiskCounters {
            disk: name.clone(),
            reads: f[3].parse().unwrap_or(0),
            read_bytes: f[5].parse::<u64>().unwrap_or(0) * 512,
            writes: f[7].parse().unwrap_or(0),
            write_bytes: f[9].parse::<u64>().unwrap_or(0) * 512,
        })
    })
}
