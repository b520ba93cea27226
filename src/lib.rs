//! pgiosim: PostgreSQL's I/O pattern against a real disk or a device model,
//! reported in database terms.

pub mod archive_target;
pub mod args;
pub mod calibrate;
pub mod capture;
pub mod cli;
pub mod commands;
pub mod core;
pub mod datafiles;
pub mod device;
pub mod engine;
pub mod error;
pub mod execute;
pub mod footprint;
pub mod huge_pages;
pub mod import;
pub mod input;
pub mod json_memory;
pub mod output;
pub mod plan;
pub mod report;
pub mod settings;
pub mod standby;
pub mod steady_state;
pub mod stop;
pub mod sweep;
pub mod units;
pub mod workload;
