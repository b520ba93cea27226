//! Device profiles from other tools' published results: fio's JSON output
//! (`profile from-fio`) and YABS's (`profile from-yabs`). Pure: the caller
//! reads the files.

pub mod fio;
pub mod yabs;
