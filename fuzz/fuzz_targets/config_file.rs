//! A postgresql.conf as `--config` reads it, through the file system (the
//! parser takes a path, and follows includes relative to it).
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use pgiosim::settings::Settings;

/// A directory of this process's own in `PGIOSIM_FUZZ_TMP` (scripts/fuzz-smoke
/// makes one on tmpfs and removes it) or the temporary directory: it holds
/// the input's file, rewritten for every input, and the files it may include.
fn conf_path() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let base = std::env::var_os("PGIOSIM_FUZZ_TMP")
            .map(PathBuf::from)
            .unwrap_or_else(std::env::temp_dir);
        let dir = base.join(format!("pgiosim-fuzz-config-{}", std::process::id()));
        // Files an input can include (the parser follows includes relative
        // to the including file): settings, a nested include, a directory,
        // a cycle back to the input.
        std::fs::create_dir_all(dir.join("conf.d")).expect("create the fuzz directory");
        let files = [
            (
                "a.conf",
                "shared_buffers = 1GB\ninclude_if_exists 'missing.conf'\n",
            ),
            ("conf.d/10-wal.conf", "max_wal_size = 2GB\n"),
            ("conf.d/20-back.conf", "include '../a.conf'\n"),
            ("loop.conf", "include 'postgresql.conf'\n"),
        ];
        for (name, text) in files {
            std::fs::write(dir.join(name), text).expect("write an included file");
        }
        dir.join("postgresql.conf")
    })
}

fuzz_target!(|data: &[u8]| {
    let path = conf_path();
    std::fs::write(path, data).expect("write the fuzz input");
    let mut settings = Settings::default();
    match settings.apply_config_file(path) {
        Ok(_) => {
            let _ = settings.to_display();
            let _ = settings.to_json();
        }
        Err(e) => {
            let _ = format!("{e:#}");
        }
    }
});
