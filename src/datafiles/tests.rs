use super::*;

fn layout(blocks: u64, wal: u32, desc: &str) -> Layout {
    Layout {
        data_blocks: blocks,
        wal_segments: wal,
        description: desc.to_string(),
    }
}

fn header_of(path: &Path) -> Header {
    match inspect(path).unwrap() {
        Found::Ours(Some(h), _) => h,
        other => panic!("{}: {other:?}", path.display()),
    }
}

fn mtime(path: &Path) -> std::time::SystemTime {
    fs::metadata(path).unwrap().modified().unwrap()
}

#[test]
fn create_reuse_mismatch_recreate() {
    let tmp = tempfile::tempdir().unwrap();
    let dd = DataDir::new(&tmp.path().join("d"), None);
    let l = layout(100, 2, "test A");
    assert_eq!(prepare(&dd, &l, false).unwrap(), Prepared::Created);
    assert_eq!(fs::metadata(dd.data_path()).unwrap().len(), 101 * 8192);
    for i in 0..2 {
        assert_eq!(
            fs::metadata(dd.wal_path(i)).unwrap().len(),
            8192 + 16 * 1024 * 1024
        );
        assert_eq!(header_of(&dd.wal_path(i)).kind, FileKind::Wal(i));
    }
    let h = header_of(&dd.data_path());
    assert!(h.complete);
    assert_eq!(h.kind, FileKind::Data);
    assert_eq!(h.data_blocks, 100);
    assert_eq!(h.description, "test A");

    // Every block is really written, non-zero, and stamped.
    let data = fs::read(dd.data_path()).unwrap();
    for b in 0..100u64 {
        let blk = &data[data_offset(b) as usize..data_offset(b) as usize + 8192];
        assert_eq!(u64::from_le_bytes(blk[..8].try_into().unwrap()), b);
        assert!(blk[16..].iter().any(|&x| x != 0));
    }
    assert_ne!(&data[8192..16384], &data[16384..24576]);

    // Same layout: reused, not rewritten.
    let before = mtime(&dd.data_path());
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert_eq!(prepare(&dd, &l, false).unwrap(), Prepared::Reused);
    assert_eq!(mtime(&dd.data_path()), before);

    // Other size: re-created.
    let l2 = layout(50, 2, "test A");
    assert_eq!(prepare(&dd, &l2, false).unwrap(), Prepared::Created);
    assert_eq!(fs::metadata(dd.data_path()).unwrap().len(), 51 * 8192);
    assert_eq!(header_of(&dd.data_path()).data_blocks, 50);

    // Other description: re-created.
    let l3 = layout(50, 2, "test B");
    assert_eq!(prepare(&dd, &l3, false).unwrap(), Prepared::Created);
    assert_eq!(header_of(&dd.data_path()).description, "test B");

    // More WAL segments: the new one is written, the old headers updated.
    let l4 = layout(50, 3, "test B");
    assert_eq!(prepare(&dd, &l4, false).unwrap(), Prepared::Created);
    for i in 0..3 {
        assert_eq!(header_of(&dd.wal_path(i)).wal_segments, 3);
    }
    assert_eq!(prepare(&dd, &l4, false).unwrap(), Prepared::Reused);

    let files = open(&dd, &l4, false).unwrap();
    assert_eq!(files.wal.len(), 3);
    assert_eq!(files.data_blocks().unwrap(), 50);
    assert!(open(&dd, &l, false).is_err());
}

#[test]
fn refuses_foreign_file_and_keeps_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dd = DataDir::new(tmp.path(), None);
    let content = b"precious user data, not pgiosim's".repeat(100);
    fs::write(dd.data_path(), &content).unwrap();
    let err = prepare(&dd, &layout(10, 1, "x"), false).unwrap_err();
    let msg = format!("{err:#}");
    assert!(msg.contains("is not a pgiosim file"), "{msg}");
    assert!(msg.contains("refusing to overwrite"), "{msg}");
    assert_eq!(fs::read(dd.data_path()).unwrap(), content);
    // Nothing else was written either.
    assert!(!dd.wal_path(0).exists());

    // Same for a foreign WAL segment file.
    fs::remove_file(dd.data_path()).unwrap();
    fs::create_dir_all(&dd.wal_dir).unwrap();
    fs::write(dd.wal_path(0), &content).unwrap();
    let err = prepare(&dd, &layout(10, 1, "x"), false).unwrap_err();
    assert!(format!("{err:#}").contains("not a pgiosim file"));
    assert_eq!(fs::read(dd.wal_path(0)).unwrap(), content);
    assert!(!dd.data_path().exists());
}

#[test]
fn refuses_non_regular_path() {
    let tmp = tempfile::tempdir().unwrap();
    let dd = DataDir::new(tmp.path(), None);
    fs::create_dir(dd.data_path()).unwrap();
    let err = prepare(&dd, &layout(10, 1, "x"), false).unwrap_err();
    let msg = format!("{err:#}");
    assert!(msg.contains("is a directory, not a regular file"), "{msg}");
    assert!(dd.data_path().is_dir());

    fs::remove_dir(dd.data_path()).unwrap();
    let fifo = std::ffi::CString::new(dd.data_path().as_os_str().as_bytes()).unwrap();
    // SAFETY: valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let err = prepare(&dd, &layout(10, 1, "x"), false).unwrap_err();
    assert!(format!("{err:#}").contains("FIFO"));
    assert!(open(&dd, &layout(10, 1, "x"), false).is_err());
}

#[test]
fn missing_parent_is_an_error_not_mkdir_p() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("a").join("b");
    let dd = DataDir::new(&dir, None);
    let err = prepare(&dd, &layout(1, 1, "x"), false).unwrap_err();
    assert!(format!("{err:#}").contains("does not exist"));
    assert!(!tmp.path().join("a").exists());

    // A missing wal_dir parent: error, and the data dir that was just
    // created is removed again.
    let dd = DataDir::new(&tmp.path().join("d"), Some(&tmp.path().join("x/y")));
    assert!(prepare(&dd, &layout(1, 1, "x"), false).is_err());
    assert!(!tmp.path().join("d").exists());
}

#[test]
fn cleanup_leaves_foreign_files() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("run");
    let dd = DataDir::new(&root, None);
    prepare(&dd, &layout(10, 2, "x"), false).unwrap();
    fs::write(root.join("notes.txt"), b"mine").unwrap();
    fs::write(dd.wal_dir.join("pgiosim.wal.999"), b"not pgiosim's").unwrap();

    let removed = cleanup(&dd).unwrap();
    assert!(removed.contains(&dd.data_path()));
    assert!(removed.contains(&dd.wal_path(0)));
    assert!(removed.contains(&dd.wal_path(1)));
    assert!(!dd.data_path().exists());
    assert_eq!(fs::read(root.join("notes.txt")).unwrap(), b"mine");
    assert_eq!(
        fs::read(dd.wal_dir.join("pgiosim.wal.999")).unwrap(),
        b"not pgiosim's"
    );
    assert!(root.exists() && dd.wal_dir.exists());

    // Without the foreign files the directories pgiosim made go too.
    fs::remove_file(root.join("notes.txt")).unwrap();
    fs::remove_file(dd.wal_dir.join("pgiosim.wal.999")).unwrap();
    fs::remove_dir(&dd.wal_dir).unwrap();
    fs::remove_dir(&root).unwrap();
    prepare(&dd, &layout(10, 1, "x"), false).unwrap();
    let removed = cleanup(&dd).unwrap();
    assert!(removed.contains(&dd.wal_dir));
    assert!(removed.contains(&root));
    assert!(!root.exists());

    // A directory pgiosim did not create stays, even if empty.
    let dd = DataDir::new(tmp.path(), None);
    prepare(&dd, &layout(10, 1, "x"), false).unwrap();
    let removed = cleanup(&dd).unwrap();
    assert!(!removed.contains(&tmp.path().to_path_buf()));
    assert!(tmp.path().exists());
    assert!(!dd.wal_dir.exists());
}

#[test]
fn header_is_written_last() {
    let tmp = tempfile::tempdir().unwrap();
    let dd = DataDir::new(tmp.path(), None);
    let l = layout(300, 1, "x");

    // A prepare killed mid-file (SIGKILL, power loss) leaves a file that
    // is pgiosim's but not valid: open refuses it, prepare re-creates it.
    let pending = Header::for_layout(FileKind::Data, &l, 0, false);
    let mut partial = pending.encode();
    partial.resize(100 * 8192, 7);
    fs::write(dd.data_path(), &partial).unwrap();
    let h = header_of(&dd.data_path());
    assert!(!h.complete);
    let msg = format!("{:#}", open(&dd, &l, false).unwrap_err());
    assert!(msg.contains("not completely written"), "{msg}");
    assert_eq!(prepare(&dd, &l, false).unwrap(), Prepared::Created);
    assert!(header_of(&dd.data_path()).complete);
    assert_eq!(prepare(&dd, &l, false).unwrap(), Prepared::Reused);

    // A truncated file (header intact, body cut) is re-created.
    let f = OpenOptions::new().write(true).open(dd.data_path()).unwrap();
    f.set_len(100 * 8192).unwrap();
    drop(f);
    assert_eq!(prepare(&dd, &l, false).unwrap(), Prepared::Created);
    assert_eq!(fs::metadata(dd.data_path()).unwrap().len(), 301 * 8192);

    // A damaged header (magic intact, rest zeroed) is re-created.
    let f = OpenOptions::new().write(true).open(dd.data_path()).unwrap();
    f.write_all_at(&[0u8; 8184], 8).unwrap();
    drop(f);
    assert_eq!(prepare(&dd, &l, false).unwrap(), Prepared::Created);
    assert!(header_of(&dd.data_path()).complete);

    // A file cut to nothing (interrupted before its first write) too.
    fs::write(dd.wal_path(0), b"").unwrap();
    assert_eq!(prepare(&dd, &l, false).unwrap(), Prepared::Created);
    assert!(header_of(&dd.wal_path(0)).complete);
}

#[test]
fn a_stopped_prepare_removes_its_partial_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dd = DataDir::new(tmp.path(), None);
    let l = layout(300, 1, "x");
    let held = lock(&dd).unwrap();
    let stop = Stop::new();
    stop.set();
    let err = prepare_locked(&dd, &l, false, &held, &stop).unwrap_err();
    assert!(
        crate::error::exit_code(&err) == crate::error::exit::INTERRUPTED,
        "{err:#}"
    );
    assert!(
        format!("{err:#}").contains("removed the partial"),
        "{err:#}"
    );
    assert!(!dd.data_path().exists());
    // A second lock on the same data set is refused while the first is held.
    let msg = format!("{:#}", lock(&dd).unwrap_err());
    assert!(msg.contains("another pgiosim is using"), "{msg}");
    drop(held);
    prepare(&dd, &l, false).unwrap();
    cleanup(&dd).unwrap();
    assert!(!tmp.path().join(LOCK_FILE_NAME).exists());
}

#[test]
fn free_space_check_names_both_figures() {
    let tmp = tempfile::tempdir().unwrap();
    let dd = DataDir::new(tmp.path(), None);
    // 2^50 blocks of 8 KiB = 8 EiB: no filesystem here has that.
    let err = prepare(&dd, &layout(1 << 50, 1, "x"), false).unwrap_err();
    let msg = format!("{err:#}");
    assert!(msg.contains("needs ") && msg.contains(" free"), "{msg}");
    assert!(!dd.data_path().exists());
}

#[test]
fn buffered_writes_of_writers_with_flush_after_start_their_writeback() {
    let tmp = tempfile::tempdir().unwrap();
    let dd = DataDir::new(tmp.path(), None);
    let l = layout(10, 1, "x");
    prepare(&dd, &l, false).unwrap();
    let files = open(&dd, &l, false).unwrap();
    let own = IoKind::WritePage {
        block: 3,
        kernel_writeback: false,
        batch: 0,
    };
    let left = IoKind::WritePage {
        block: 3,
        kernel_writeback: true,
        batch: 0,
    };
    assert!(files.starts_writeback(own));
    assert!(!files.starts_writeback(left));
    assert!(!files.starts_writeback(IoKind::ReadPage { block: 3 }));
    let (f, off, len) = files.locate(own, files.data_blocks().unwrap()).unwrap();
    files.file(f).write_all_at(&[1u8; 8192], off).unwrap();
    files.start_writeback(f, off, len).unwrap();
    // With O_DIRECT the write itself goes to the disk: nothing to start.
    let direct = OpenFiles {
        direct: true,
        ..files
    };
    assert!(!direct.starts_writeback(own));
}

#[test]
fn locate_maps_and_bounds_requests() {
    let tmp = tempfile::tempdir().unwrap();
    let dd = DataDir::new(tmp.path(), None);
    let l = layout(10, 1, "x");
    prepare(&dd, &l, false).unwrap();
    let files = open(&dd, &l, false).unwrap();
    let n = files.data_blocks().unwrap();
    assert_eq!(
        files.locate(IoKind::ReadPage { block: 9 }, n).unwrap(),
        (FileRef::Data, 10 * 8192, 8192)
    );
    assert!(files.locate(IoKind::ReadPage { block: 10 }, n).is_err());
    assert_eq!(
        files
            .locate(
                IoKind::WalWrite {
                    segment: 0,
                    offset: 8192,
                    len: 16384
                },
                n
            )
            .unwrap(),
        (FileRef::Wal(0), 16384, 16384)
    );
    let past_end = IoKind::WalWrite {
        segment: 0,
        offset: WAL_SEGMENT_BYTES - 8192,
        len: 16384,
    };
    assert!(files.locate(past_end, n).is_err());
    assert!(files.locate(IoKind::WalSync { segment: 1 }, n).is_err());
}
