//! psync engine (being written).
