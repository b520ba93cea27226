//! Devices in virtual time: profiles that describe a disk, the model that
//! turns a profile into completion times, and the model's own fio-like
//! microbenchmarks.
//!
//! All of it is sans-I/O (no clock, no thread, no file except the loaders:
//! [`Profile::load`], [`import::yabs::load`]; fio results come in as text, read by
//! `calibrate`) and deterministic for a seed, so `model` runs repeat to the
//! bit.

pub mod block_layer;
pub mod import;
pub mod inode_times;
pub mod instance;
pub mod microbench;
pub mod model;
pub mod name;
pub mod profile;
pub mod provisioned;
pub mod raid0;
pub mod rds_storage;
pub mod request;
pub mod summary;

pub use model::DeviceModel;
pub use profile::{Op, Profile, shipped};
