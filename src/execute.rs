//! Carrying out a [`RunPlan`] to its [`RunResult`]: on the device model in
//! virtual time, or on the files on this disk (prepared and locked first,
//! standbys' WAL files beside them). Prints only notices and -P lines; the
//! report is the caller's.

pub mod one_shot;

use std::path::Path;

use anyhow::{Context, Result};

use crate::core::config::CoreConfig;
use crate::core::database::Database;
use crate::core::io::PAGE_BYTES;
use crate::core::time::{Nanos, SEC};
use crate::core::workload::Workload;
use crate::datafiles::{self, DataDir, Layout, Prepared};
use crate::device::model::DeviceModel;
use crate::device::profile::Profile;
use crate::engine::Device;
use crate::engine::driver::{self, Ending};
use crate::engine::psync::PsyncDevice;
use crate::engine::sim::SimDevice;
use crate::engine::uring::UringDevice;
use crate::error::Interrupted;
use crate::output::progress_bar_wanted;
use crate::plan::{Disk, EngineChoice, RunPlan, Settle, Target, WAL_SEGMENTS, layout_for};
use crate::report::DeviceIos;
use crate::report::{RunInfo, RunResult, TimerLagFigures, text};
use crate::standby::StandbyDecl;
use crate::steady_state;
use crate::stop::Stop;

/// Run the plan where it says; the result, and with --emulate the
/// emulation's summary line.
pub fn execute(plan: RunPlan, stop: &Stop) -> Result<(RunResult, Option<String>)> {
    match plan.target.clone() {
        Target::Model(profile) => Ok((model(plan, &profile, stop)?, None)),
        Target::Disk(disk) => run(plan, &disk, stop),
    }
}

/// The plan on the device model.
fn model(plan: RunPlan, profile: &Profile, stop: &Stop) -> Result<RunResult> {
    if !plan.quiet {
        eprintln!("model: device {}; seed {}", profile.name, plan.cfg.seed);
    }
    let mut dev = sim_device(profile, &plan.cfg, &plan.standbys);
    let mut info = run_info("model", &plan);
    info.io_engine = format!("device model {}", profile.name);
    info.data_io = "modelled".into();
    info.device = Some(profile.to_json());
    drive(plan, info, &mut dev, stop, None)
}

/// What a model plan runs, built but not started: the database and its
/// simulated device (for benchmarks of the simulation itself).
pub fn model_parts(plan: RunPlan) -> Result<(Database, SimDevice)> {
    let Target::Model(profile) = &plan.target else {
        anyhow::bail!("model_parts: the plan runs on the disk, not the device model");
    };
    let dev = sim_device(profile, &plan.cfg, &plan.standbys);
    Ok((Database::new(plan.cfg, Box::new(plan.workload)), dev))
}

/// The plan on the files on this disk.
fn run(plan: RunPlan, disk: &Disk, stop: &Stop) -> Result<(RunResult, Option<String>)> {
    let dd = &disk.data;
    let quiet = plan.quiet;
    let layout = layout_for(&plan.workload, plan.scale);
    // Held to the end of the run: a second pgiosim on these files is refused.
    let _held = datafiles::lock(dd)?;
    let prepared =
        datafiles::prepare_locked(dd, &layout, progress_bar_wanted(quiet), &_held, stop)?;
    if stop.is_set() {
        return Err(
            Interrupted("interrupted after preparing the data set, before the run".into()).into(),
        );
    }
    if !quiet {
        eprintln!(
            "{}: {} (scale {}, {:.0} MB); seed {}",
            dd.dir.display(),
            prepared_word(prepared),
            plan.scale,
            (layout.data_blocks * PAGE_BYTES) as f64 / 1e6,
            plan.cfg.seed
        );
    }
    let shared_buffers = hold_shared_buffers(disk, &plan, quiet)?;
    let standby_dirs = standby_dirs(&disk.standby_root, &plan.standbys);
    let _standby_locks = lock_standbys(&standby_dirs, quiet, stop)?;
    // Each standby has one WAL I/O in flight at most.
    let max_in_flight = plan.cfg.clients + 4 + plan.standbys.len() as u32;
    let mut dev = open_device(disk, &layout, &standby_dirs, max_in_flight, quiet)?;
    let mut emulation = None;
    if let Some(profile) = &disk.emulate {
        let (d, handle) = crate::engine::emulate::wrap(dev, profile, plan.cfg.seed);
        dev = d;
        emulation = Some((handle, profile));
    }
    let mut info = run_info("run", &plan);
    info.io_engine = dev.name().into();
    info.data_io = if disk.buffered { "buffered" } else { "direct" }.into();
    info.dir = dd.dir.display().to_string();
    info.wal_dir = dd.wal_dir.display().to_string();
    info.device = emulation.as_ref().map(|(_, p)| p.to_json());
    let result = drive(plan, info, dev.as_mut(), stop, shared_buffers.as_ref())
        .with_context(|| format!("run in {}", dd.dir.display()))?;
    Ok((result, emulation.map(|(h, _)| h.stats().summary())))
}

/// Through the page cache, shared_buffers' memory must be taken from it
/// as PostgreSQL takes it (see engine::shared_memory): mapped now, charged
/// as the pool fills, held to the end of the run.
fn hold_shared_buffers(
    disk: &Disk,
    plan: &RunPlan,
    quiet: bool,
) -> Result<Option<crate::engine::shared_memory::SharedMemory>> {
    if !disk.buffered {
        return Ok(None);
    }
    let held =
        crate::engine::shared_memory::SharedMemory::hold(plan.settings.shared_buffers_bytes)?;
    if !quiet {
        eprintln!(
            "mapping {} of shared memory for shared_buffers, charged as the pool fills, as \
             PostgreSQL's is, so the page cache has the room it would have",
            crate::units::format_memory(held.len() as u64)
        );
    }
    Ok(Some(held))
}

/// Each standby's files, prepared and locked for the run like the
/// primary's: a second run, `prepare` or `cleanup` there is refused.
fn lock_standbys(
    standby_dirs: &[DataDir],
    quiet: bool,
    stop: &Stop,
) -> Result<Vec<datafiles::DataSetLock>> {
    let mut locks = Vec::new();
    for sd in standby_dirs {
        let held = datafiles::lock(sd)?;
        datafiles::prepare_locked(
            sd,
            &standby_layout(),
            progress_bar_wanted(quiet),
            &held,
            stop,
        )?;
        locks.push(held);
    }
    Ok(locks)
}

/// Prepare (or check) the data set of `workload` at `scale` on `disk`.
pub fn prepare(
    disk: &DataDir,
    workload: &dyn Workload,
    scale: u64,
    quiet: bool,
    stop: &Stop,
) -> Result<Prepared> {
    let layout = layout_for(workload, scale);
    let held = datafiles::lock(disk)?;
    datafiles::prepare_locked(disk, &layout, progress_bar_wanted(quiet), &held, stop)
}

/// What preparing did, in words.
pub fn prepared_word(p: Prepared) -> &'static str {
    match p {
        Prepared::Reused => "data set already prepared, reused",
        Prepared::Created => "data set prepared",
    }
}

/// Prefix of a standby's directory under --standby-dir (or --dir).
const STANDBY_DIR_PREFIX: &str = "standby-";

/// Each standby's directory: `<root>/standby-<name>`, its WAL in `pg_wal`
/// there.
fn standby_dirs(root: &Path, decls: &[StandbyDecl]) -> Vec<DataDir> {
    decls
        .iter()
        .map(|d| DataDir::new(&root.join(format!("{STANDBY_DIR_PREFIX}{}", d.name)), None))
        .collect()
}

/// The standby directories `run` made in `dir` (its --dir, or the
/// --standby-dir it was given), for cleanup.
pub fn default_standby_dirs(dir: &Path) -> Vec<DataDir> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut dirs: Vec<DataDir> = entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(STANDBY_DIR_PREFIX)
                && e.file_type().is_ok_and(|t| t.is_dir())
        })
        .map(|e| DataDir::new(&e.path(), None))
        .collect();
    dirs.sort_by(|a, b| a.dir.cmp(&b.dir));
    dirs
}

/// A standby's files: WAL segments like the primary's (and an empty data
/// file, only a header: the standby's data pages are not modelled).
fn standby_layout() -> Layout {
    Layout {
        data_blocks: 0,
        wal_segments: WAL_SEGMENTS,
        description: "standby WAL".into(),
    }
}

/// Open the files (the primary's, then each standby's WAL) and build the
/// device the plan asks for.
pub fn open_device(
    disk: &Disk,
    layout: &Layout,
    standbys: &[DataDir],
    max_in_flight: u32,
    quiet: bool,
) -> Result<Box<dyn Device>> {
    let open = || -> Result<datafiles::OpenFiles> {
        let mut files = datafiles::open(&disk.data, layout, !disk.buffered)?;
        for sd in standbys {
            files.attach_standby(datafiles::open(sd, &standby_layout(), !disk.buffered)?);
        }
        Ok(files)
    };
    let files = open()?;
    // One psync thread per possible outstanding I/O: every client, plus the
    // checkpointer, bgwriter and the WAL flush.
    let threads = max_in_flight as usize;
    match disk.io_engine {
        EngineChoice::Psync => Ok(Box::new(PsyncDevice::new(files, threads)?)),
        EngineChoice::IoUring => Ok(Box::new(
            UringDevice::new(files, max_in_flight).context("--io-engine io-uring")?,
        )),
        EngineChoice::Auto => match UringDevice::new(files, max_in_flight) {
            Ok(d) => Ok(Box::new(d)),
            Err(e) => {
                if !quiet {
                    eprintln!("notice: io_uring is not available ({e:#}); using the psync engine");
                }
                Ok(Box::new(PsyncDevice::new(open()?, threads)?))
            }
        },
    }
}

/// The simulated device of `model`: the primary's, and each standby's
/// WAL device (its device=, else the primary's profile), each seeded apart.
fn sim_device(profile: &Profile, cfg: &CoreConfig, standbys: &[StandbyDecl]) -> SimDevice {
    let mut dev = SimDevice::new(DeviceModel::new(profile, cfg.seed));
    for (i, d) in standbys.iter().enumerate() {
        let p = d.device.as_ref().unwrap_or(profile);
        dev.add_standby(DeviceModel::new(p, cfg.seed.wrapping_add(1 + i as u64)));
    }
    dev
}

/// The result's description of the run, but for the device's part.
fn run_info(mode: &str, plan: &RunPlan) -> RunInfo {
    let cfg = &plan.cfg;
    RunInfo {
        mode: mode.into(),
        workload: plan.workload.name().into(),
        transaction_type: plan.workload.transaction_type().into(),
        clients: cfg.clients,
        cpus: cfg.cpus,
        threads_per_core: cfg.threads_per_core,
        cpu_speed: cfg.cpu_speed,
        query_mode: plan.protocol.name().into(),
        jobs: cfg.client_threads,
        client_rtt_us: plan.client_elsewhere.then(|| cfg.round_trip as f64 / 1e3),
        client_tls: plan.workload.uses_tls(),
        // A -t run's duration in the core is its cap, not the user's length.
        duration_s: cfg
            .duration
            .filter(|_| cfg.transactions_per_client.is_none())
            .map(|d| d as f64 / 1e9),
        transactions_per_client: cfg.transactions_per_client,
        scale: plan.scale,
        io_engine: String::new(),
        data_io: String::new(),
        os_cache_bytes: cfg.os_cache_pages * PAGE_BYTES,
        dir: String::new(),
        wal_dir: String::new(),
        seed: cfg.seed,
        device: None,
        timer_lag: None,
        precision_pct: plan.settle.map(|s| s.precision * 100.0),
        stopped_on: None,
        stopped_because: None,
        cpu_probe: plan.cpu_probe,
        cpu: plan.cpu.map(str::to_string),
    }
}

/// What a run's end was, beside how the driver saw it.
struct Ended {
    /// `model` ran until it knew (no -T or -t).
    settle: bool,
    /// It stopped early on a transient past the cap.
    beyond_cap: bool,
    /// It stopped at the precision rule's cap without its precision.
    at_settle_cap: bool,
    /// A -t run in `model` reached its time cap.
    at_transactions_cap: bool,
    /// The run was -t's.
    by_transactions: bool,
}

impl Ended {
    /// `run.stopped_on`.
    fn why(&self, ending: Ending) -> &'static str {
        match ending {
            Ending::Interrupted => "interrupted",
            Ending::Settled if self.beyond_cap => "transient",
            Ending::Settled if self.at_settle_cap => "cap",
            Ending::Settled => "precision",
            Ending::Completed if self.settle || self.at_transactions_cap => "cap",
            Ending::Completed if self.by_transactions => "transactions",
            Ending::Completed => "duration",
        }
    }
}

/// How often, in simulated seconds, a run past the precision rule's cap
/// (waiting for whole autovacuum cycles) looks at its steady state.
const PAST_CAP_LOOK_S: u64 = 10;

/// The most transactions a run past the cap for whole vacuum cycles may
/// simulate in all: about a minute of CPU at the model's million or so a
/// second. A faster server's cycles are shorter, a larger table's longer;
/// past this the answer stays "not reached", and -T runs as long as asked.
const VACUUM_CYCLES_MAX_TRANSACTIONS: f64 = 50e6;

/// `model`'s stopping rule, asked each simulated second.
struct SettleRule {
    settle: Settle,
    /// A transient that outlasts the cap by far: it stopped early.
    beyond_cap: Option<steady_state::Transient>,
    /// It stopped at the cap without its precision.
    at_cap: bool,
}

impl SettleRule {
    fn new(settle: Settle) -> SettleRule {
        SettleRule {
            settle,
            beyond_cap: None,
            at_cap: false,
        }
    }

    /// Whether the run has said enough at `now`.
    fn done(&mut self, db: &Database, now: Nanos) -> bool {
        let cap = self.settle.cap;
        self.beyond_cap = steady_state::beyond_cap(db, now, cap);
        if self.beyond_cap.is_some() {
            return true;
        }
        // Past the cap only whole vacuum cycles are waited for, and they
        // are long: a look every ten seconds.
        if now > cap && !(now / SEC).is_multiple_of(PAST_CAP_LOOK_S) {
            return false;
        }
        if steady_state::settled(
            &steady_state::of_database(db, now),
            self.settle.precision,
            steady_state::recurring(db),
        ) {
            return true;
        }
        if now < cap {
            return false;
        }
        // At the pace so far, what running to `end` would simulate.
        let pace = db.stats().transactions as f64 / now as f64;
        let cycles_due = steady_state::vacuum_cycles_end(db, now).is_some_and(|end| {
            now < end
                && end <= db.config().duration.unwrap_or(0)
                && pace * end as f64 <= VACUUM_CYCLES_MAX_TRANSACTIONS
        });
        self.at_cap = !cycles_due;
        self.at_cap
    }
}

/// Drive the database on `dev` and build the result; prints only -P lines.
/// `shared_buffers`: the real memory a `run --buffered` charges as the
/// modelled pool fills.
fn drive<D: Device + ?Sized>(
    plan: RunPlan,
    info: RunInfo,
    dev: &mut D,
    stop: &Stop,
    shared_buffers: Option<&crate::engine::shared_memory::SharedMemory>,
) -> Result<RunResult> {
    let mut info = info;
    // Where a -t run stops if its clients have not finished (`model`).
    let transactions_cap = plan
        .cfg
        .duration
        .filter(|_| plan.cfg.transactions_per_client.is_some());
    let mut db = Database::new(plan.cfg, Box::new(plan.workload));
    let mut print = |p| eprintln!("{}", text::progress_line(&p));
    let mut rule = plan.settle.map(SettleRule::new);
    // Asked each (simulated) second: the seed fixes where it stops.
    let (ending, lag) = driver::drive_until(
        &mut db,
        dev,
        stop,
        plan.progress,
        &mut print,
        &mut |db, now| {
            if let Some(m) = shared_buffers {
                m.buffers_used(db.stats().milestones.shared_buffers_used);
            }
            rule.as_mut().is_some_and(|rule| rule.done(db, now))
        },
    )?;
    let beyond_cap = rule.as_ref().and_then(|r| r.beyond_cap.clone());
    let at_settle_cap = rule.as_ref().is_some_and(|r| r.at_cap);
    let ended = Ended {
        settle: plan.settle.is_some(),
        beyond_cap: beyond_cap.is_some(),
        at_settle_cap,
        at_transactions_cap: transactions_cap.is_some() && db.end_time() == transactions_cap,
        by_transactions: info.transactions_per_client.is_some(),
    };
    info.stopped_on = Some(ended.why(ending).into());
    if plan.settle.is_some() {
        // What it ran for, as -T would have said.
        info.duration_s = db.end_time().map(|t| t as f64 / 1e9);
    }
    info.stopped_because = beyond_cap.map(|t| t.phrase());
    if info.mode == "run" {
        info.timer_lag = Some(TimerLagFigures {
            timers: lag.timers,
            mean_us: lag.mean_us(),
            p99_us: lag.quantile_us(0.99),
            max_us: lag.max_us(),
        });
    }
    let partial = ending == Ending::Interrupted;
    let mut result = RunResult::from_database(&db, info, plan.settings.to_json(), partial);
    result.io.device_ios = dev.counted_ios().map(|c| {
        DeviceIos::new(
            c,
            dev.disk_ios().unwrap_or(c),
            result.summary.transactions as f64,
        )
    });
    Ok(result)
}
