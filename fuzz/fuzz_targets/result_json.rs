//! A result or sweep JSON as `compare` and `report` read it: loaded, compared
//! with itself, and rendered as the HTML report.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use pgiosim::commands::compare;
use pgiosim::report::compare::render as render_comparison;
use pgiosim::report::html::{Inputs, render};
use pgiosim::report::load::{Document, document_from_str};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("fuzz.json");
    let doc = match document_from_str(path, text) {
        Ok(doc) => doc,
        Err(e) => {
            let _ = format!("{e:#}");
            return;
        }
    };
    let inputs = match doc {
        Document::Result(r) => {
            let results = vec![(*r).clone(), *r];
            let why = compare::incompatibilities(&results);
            let _ = render_comparison(&compare::build(&results, !why.is_empty(), why));
            Inputs {
                results,
                sweeps: Vec::new(),
            }
        }
        Document::Sweep(s) => Inputs {
            results: Vec::new(),
            sweeps: vec![(path.to_path_buf(), *s)],
        },
    };
    if let Err(e) = render("fuzz", &inputs) {
        let _ = format!("{e:#}");
    }
});
