//! `dist`'s files (docs/design.md §2.11): outputs through links, per-rank sets replaced whole,
//! stale files of earlier runs, inputs dist refuses, and slabs drawn evenly from any file.

use super::*;

/// Outputs and inputs as every command takes them: `--pairs-out` through a link writes its
/// target (the link stays), per-rank files of an earlier run with a gap in its numbering are
/// all removed, a generated scene with fewer objects than ranks gives its pairs, and a device
/// as the scene file is refused at once (it was read to its end first: `/dev/zero` forever).
#[test]
fn links_gaps_empty_ranks_and_devices() {
    let d = dir("files");
    let scene = Scene::generate(SceneKind::Paper, &SceneParams::new(400, 5));
    let path = d.join("paper.csv");
    scene.write_csv(&path).unwrap();
    let expected = brute(&scene.spheres);
    let file = path.to_str().unwrap();
    // Through a link: the target gets the pairs, the link stays a link.
    let target = d.join("target.csv");
    let link = d.join("link.csv");
    std::fs::write(&target, "old").unwrap();
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let args = then_path(&["dist", "--scene-file", file, "--pairs-out"], &link);
    ok(mpirun(2, &args), "pairs through a link");
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    same(&read_pairs(&target), &expected, "the link's target");
    // A gap in an earlier run's numbering: every rank past the last goes.
    let per_rank = d.join("gap/");
    let per_rank_arg = per_rank.to_str().unwrap();
    let args = ["dist", "--scene-file", file, "--pairs-out", per_rank_arg];
    ok(mpirun(5, &args), "5 ranks");
    std::fs::remove_file(per_rank.join("pairs-rank-2.csv")).unwrap();
    // Names this never writes stay (they parse as rank numbers, but are the user's).
    for user in ["pairs-rank-+7.csv", "pairs-rank-007.csv"] {
        std::fs::write(per_rank.join(user), "i,j\n").unwrap();
    }
    ok(mpirun(2, &args), "2 ranks after 5");
    let mut names: Vec<String> = std::fs::read_dir(&per_rank)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "pairs-rank-+7.csv",
            "pairs-rank-0.csv",
            "pairs-rank-007.csv",
            "pairs-rank-1.csv"
        ]
    );
    // Four ranks, three objects: the ranks without one take part.
    let three = d.join("three.csv");
    let args = ["dist", "--scene", "one-point", "--n", "3", "--pairs-out"];
    ok(mpirun(4, &then_path(&args, &three)), "4 ranks, 3 objects");
    same(
        &read_pairs(&three),
        &[[0, 1], [0, 2], [1, 2]],
        "one point of 3",
    );
    // More pairs than one call stores: the hint is dist's own (it has no count-only run).
    let stderr = exit_2(mpirun(1, &["dist", "--scene", "one-point", "--n", "24000"]));
    assert!(
        stderr.contains("dist keeps every pair") && !stderr.contains("count alone"),
        "{stderr}"
    );
    // Past 2^32 objects across ranks: ids are 64-bit, so the limit is each rank's memory (not
    // the 32 bits of one process's pairs, which `--n` said before).
    let stderr = exit_2(mpirun(
        2,
        &["dist", "--scene", "paper", "--n", "4294967296"],
    ));
    assert!(
        stderr.contains("2147483648 objects") && stderr.contains("start more ranks"),
        "{stderr}"
    );
    // A device: exit 2 at once, naming it.
    let stderr = exit_2(mpirun(2, &["dist", "--scene-file", "/dev/zero"]));
    assert!(stderr.contains("/dev/zero: not a regular file"), "{stderr}");
}

/// A write that fails on one rank (its files limited to 8 blocks) ends the run with exit 2, and
/// the per-rank files of the run before stay whole: the other ranks' new files are not put in
/// (the set held three ranks' files of this run beside one of the run before), and the run
/// before's files of ranks past this run's are not removed.
#[test]
fn a_write_failing_on_one_rank_leaves_the_files_of_the_run_before() {
    let d = dir("write-fails");
    let (first, second) = (d.join("first.csv"), d.join("second.csv"));
    let scene = Scene::generate(SceneKind::Paper, &SceneParams::new(3_000, 1));
    scene.write_csv(&first).unwrap();
    // 124,750 pairs: every rank's file past the limited rank's 8 KiB.
    Scene::generate(SceneKind::OnePoint, &SceneParams::new(500, 2))
        .write_csv(&second)
        .unwrap();
    let out_dir = d.join("out/");
    let out = out_dir.to_str().unwrap();
    let bin = env!("CARGO_BIN_EXE_sweepfan");
    let (first, second) = (first.to_str().unwrap(), second.to_str().unwrap());
    // The run before on five ranks: its fifth file, past the failed run's four ranks, stays too.
    ok(
        mpirun(5, &["dist", "--scene-file", first, "--pairs-out", out]),
        "the run before",
    );
    let read_all = || {
        let mut all: Vec<Pair> = (0..5)
            .flat_map(|r| read_pairs(&out_dir.join(format!("pairs-rank-{r}.csv"))))
            .collect();
        all.sort_unstable();
        all
    };
    let before = read_all();
    same(&before, &brute(&scene.spheres), "the run before");
    let limited = format!(
        "trap '' XFSZ; ulimit -f 8; exec {bin} dist --scene-file {second} --pairs-out {out}"
    );
    let run = ["dist", "--scene-file", second, "--pairs-out", out];
    let mut args = vec!["-np", "2", bin];
    args.extend_from_slice(&run);
    args.extend_from_slice(&[
        ":", "-np", "1", "bash", "-c", &limited, ":", "-np", "1", bin,
    ]);
    args.extend_from_slice(&run);
    let stderr = exit_2(mpirun_with(&args));
    assert!(stderr.contains("rank 2 of 4"), "{stderr}");
    same(&read_all(), &before, "the files after the failed run");
    let names: Vec<String> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("part"))
        .collect();
    assert!(names.is_empty(), "parts left: {names:?}");
}

/// Slabs drawn from a sample every rank takes alike: a file whose every other line lies in a
/// second place (ids a multiple of the sample's stride apart, all sampled from one place) still
/// splits evenly (one rank held twice the mean, and every frame's redraw drew the same slabs).
#[test]
fn slabs_split_a_file_of_alternating_places_evenly() {
    let d = dir("alternating");
    let path = d.join("alternating.csv");
    let mut text = String::from("x,y,z,r\n");
    let mut s = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 40) as f64 / (1u64 << 24) as f64 * 100.0
    };
    for k in 0..140_000 {
        let far = if k % 2 == 0 { 0.0 } else { 200.0 };
        let (x, y, z) = (next() + far, next() + far, next() + far);
        text += &format!("{x},{y},{z},0.3\n");
    }
    std::fs::write(&path, text).unwrap();
    let json = d.join("report.json");
    let args = ["dist", "--scene-file", path.to_str().unwrap(), "--json"];
    ok(mpirun(3, &then_path(&args, &json)), "3 ranks");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let objects: Vec<u64> = report["per_rank"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["objects"].as_u64().unwrap())
        .collect();
    assert_eq!(objects.iter().sum::<u64>(), 140_000, "{objects:?}");
    let most = *objects.iter().max().unwrap() as f64;
    assert!(most < 1.2 * 140_000.0 / 3.0, "{objects:?}");
}
