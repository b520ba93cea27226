//! `pgiosim report` renders in a real browser: headless Chromium from
//! Debian's packages loads the file offline, its DOM holds every chart as
//! SVG, and its screenshot is not blank (decoded, with the breakdown's
//! colours in it).
//!
//! Without Chromium (`.ci/run` installs it) the test shows as ignored
//! with the reason, or fails under `CI=true`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{pgiosim, skip, text};

fn ok(args: &[&str]) {
    let o = pgiosim(args);
    assert!(o.status.success(), "{args:?}: {}", text(&o));
}

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

fn find_chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|n| on_path(n))
}

/// Chromium, if installed (`.ci/run` installs Debian's package; a test
/// never installs anything).
fn chromium() -> Result<PathBuf, String> {
    find_chromium().ok_or_else(|| "chromium is not installed (.ci/run installs it)".into())
}

/// What a headless Chromium run printed.
struct Ran {
    ok: bool,
    stdout: String,
    stderr: String,
}

/// Run headless Chromium on `url` with `extra` flags, killed after 120 s.
/// Its output goes to files, so a large DOM cannot fill a pipe and stall it.
fn headless(chrome: &Path, dir: &Path, extra: &[String], url: &str) -> Ran {
    let out_path = dir.join("chromium.stdout");
    let err_path = dir.join("chromium.stderr");
    let mut child = Command::new(chrome)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .args(extra)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .expect("start chromium");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait for chromium") {
            break s;
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "chromium did not finish in 120 s: {}",
                std::fs::read_to_string(&err_path).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    Ran {
        ok: status.success(),
        stdout: std::fs::read_to_string(&out_path).unwrap_or_default(),
        stderr: std::fs::read_to_string(&err_path).unwrap_or_default(),
    }
}

/// The decoded screenshot: width, height, RGB(A) pixels.
struct Image {
    width: usize,
    height: usize,
    channels: usize,
    data: Vec<u8>,
}

fn decode(path: &Path) -> Image {
    let file = std::fs::File::open(path).expect("screenshot written");
    let mut decoder = png::Decoder::new(std::io::BufReader::new(file));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().expect("a PNG");
    let mut data = vec![0; reader.output_buffer_size().expect("PNG size")];
    let info = reader.next_frame(&mut data).expect("PNG frame");
    data.truncate(info.buffer_size());
    let channels = info.color_type.samples();
    assert!(
        channels >= 3,
        "colour screenshot, got {:?}",
        info.color_type
    );
    Image {
        width: info.width as usize,
        height: info.height as usize,
        channels,
        data,
    }
}

impl Image {
    fn pixels(&self) -> impl Iterator<Item = (u8, u8, u8)> + '_ {
        self.data
            .chunks_exact(self.channels)
            .map(|p| (p[0], p[1], p[2]))
    }
}

fn report_renders_in_headless_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let d = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    // Two runs long enough for checkpoints (30 s timeout, 70 s modelled),
    // and a sweep over two devices.
    for dev in ["nvme", "gp3"] {
        ok(&[
            "model",
            "-q",
            "-c",
            "8",
            "-T",
            "70",
            "--seed",
            "1",
            "--set",
            "checkpoint_timeout=30s",
            "--device",
            dev,
            "--json",
            &d(&format!("{dev}.json")),
        ]);
    }
    ok(&[
        "sweep",
        "-q",
        "--clients",
        "1,2,4,8",
        "--device",
        "nvme,gp3",
        "-T",
        "2",
        "--seed",
        "1",
        "--json",
        &d("sweep.json"),
    ]);
    let html_path = d("report.html");
    ok(&[
        "report",
        "-q",
        &d("nvme.json"),
        &d("gp3.json"),
        &d("sweep.json"),
        "-o",
        &html_path,
    ]);
    let html = std::fs::read_to_string(&html_path).unwrap();

    // Self-contained: nothing to fetch, no script.
    for banned in [
        "<script", "<link", "<img", "src=", "@import", "url(", "<iframe",
    ] {
        assert!(!html.contains(banned), "the report has {banned}");
    }
    let links = html.matches("http").count();
    let namespaces = html.matches("http://www.w3.org/2000/svg").count();
    assert_eq!(links, namespaces, "only SVG namespaces may name a URL");

    // Charts: breakdown and combined CDF; per run tps over time and CDF; the
    // sweep's tps and p99 against clients and one breakdown per device.
    let expected = [
        ("breakdown", 1),
        ("latency-cdf-all", 1),
        ("tps-over-time", 2),
        ("latency-cdf", 2),
        ("sweep-tps", 1),
        ("sweep-p99", 1),
        ("sweep-breakdown", 2),
    ];
    let charts: usize = expected.iter().map(|e| e.1).sum();
    assert_eq!(html.matches("<svg").count(), charts);

    let chrome = match chromium() {
        Ok(c) => c,
        Err(why) => {
            skip(&format!("report_renders_in_headless_chromium: {why}"));
        }
    };
    let profile = dir.path().join("chromium");
    std::fs::create_dir_all(&profile).unwrap();
    let url = format!("file://{html_path}");

    // The DOM as the browser built it: every chart is an SVG element with
    // drawn lines in it.
    let o = headless(&chrome, &profile, &["--dump-dom".to_string()], &url);
    assert!(o.ok, "chromium --dump-dom: {}", o.stderr);
    let dom = &o.stdout;
    assert_eq!(
        dom.matches("<svg").count(),
        charts,
        "SVG elements in the DOM"
    );
    for (kind, n) in expected {
        let tag = format!("data-chart=\"{kind}\"");
        assert_eq!(dom.matches(&tag).count(), n, "{tag}");
    }
    assert!(dom.matches("<polyline").count() >= 8, "line series drawn");
    assert!(dom.matches("<rect").count() >= 50, "bars drawn");

    // The screenshot is not blank: many colours, much ink, and the
    // breakdown's own fills.
    let shot = dir.path().join("report.png");
    let o = headless(
        &chrome,
        &profile,
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1200,5000".to_string(),
        ],
        &url,
    );
    assert!(o.ok, "chromium --screenshot: {}", o.stderr);
    let img = decode(&shot);
    assert_eq!((img.width, img.height), (1200, 5000));
    let total = img.width * img.height;
    let mut colours = std::collections::HashSet::new();
    let mut ink = 0usize;
    let fill = |c: (u8, u8, u8)| img.pixels().filter(|p| *p == c).count();
    let cpu = fill((0x4e, 0x79, 0xa7));
    let wal_fsync = fill((0x59, 0xa1, 0x4f));
    let lock_wait = fill((0xb0, 0x7a, 0xa1));
    for p in img.pixels() {
        colours.insert(p);
        // Darker than the page's near-white background.
        if (p.0 as u32 + p.1 as u32 + p.2 as u32) < 600 {
            ink += 1;
        }
    }
    common::note!(
        "screenshot: {} colours, {:.1}% ink, cpu {cpu} px, wal_fsync {wal_fsync} px, lock_wait {lock_wait} px",
        colours.len(),
        100.0 * ink as f64 / total as f64
    );
    assert!(colours.len() > 200, "{} colours: blank?", colours.len());
    assert!(
        ink * 1000 > total * 15,
        "only {ink} of {total} pixels have ink"
    );
    for (name, n) in [
        ("cpu", cpu),
        ("wal_fsync", wal_fsync),
        ("lock_wait", lock_wait),
    ] {
        assert!(
            n > 500,
            "{name}: {n} pixels of its colour: breakdown bars not drawn"
        );
    }
}

fn main() -> std::process::ExitCode {
    common::harness::run(common::trials![report_renders_in_headless_chromium])
}
