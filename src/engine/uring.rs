//! io_uring engine (being written).
