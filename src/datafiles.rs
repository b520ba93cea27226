//! Data and WAL files on disk (being written).
