//! The sans-I/O core: state machines that take events stamped with a time and
//! return requests. Nothing here reads a clock, sleeps or touches a file.

pub mod io;
pub mod time;
