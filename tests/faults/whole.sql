-- Is every run in a topdown SQLite store whole? Prints one line per
-- problem and nothing when the store is sound (tests/faults/lib.sh runs
-- it with sqlite3 after every fault). A run is written in one transaction
-- (storage/sqlite.c), so a fault may lose a run but must never leave part
-- of one: a runs row whose child rows are missing or extra, child rows
-- without their run, or counts in a row that its children contradict.
PRAGMA foreign_keys = ON;

-- The file itself: SQLite's own check, and every reference resolves
-- (child rows of a deleted or never-finished run).
SELECT 'integrity: ' || integrity_check FROM pragma_integrity_check WHERE integrity_check <> 'ok';
SELECT 'orphan row in ' || "table" || ' (rowid ' || coalesce(rowid, '-') || ')' FROM pragma_foreign_key_check;
-- counters point at threads through a composite key, which
-- foreign_key_check covers; run_pk of counters has no key of its own.
SELECT 'counters of missing run ' || c.run_pk FROM (SELECT DISTINCT run_pk FROM counters) c
WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.pk = c.run_pk);

-- The runs row agrees with itself.
SELECT 'run ' || id || ': duration_ns is not ended_ns - started_ns' FROM runs
WHERE duration_ns <> ended_ns - started_ns;
SELECT 'run ' || id || ': event_names is not a JSON array' FROM runs
WHERE json_valid(event_names) = 0 OR json_type(event_names) <> 'array';
SELECT 'run ' || id || ': labels is not a JSON object' FROM runs
WHERE json_valid(labels) = 0 OR json_type(labels) <> 'object';

-- Labels: the JSON object and the run_labels rows say the same.
SELECT 'run ' || r.id || ': label ' || j.key || ' missing from run_labels'
FROM (SELECT * FROM runs WHERE json_valid(labels)) r, json_each(r.labels) j
WHERE NOT EXISTS (SELECT 1 FROM run_labels l WHERE l.run_pk = r.pk AND l.key = j.key AND l.value = j.value);
SELECT 'run ' || r.id || ': run_labels row ' || l.key || ' not in labels'
FROM runs r JOIN run_labels l ON l.run_pk = r.pk
WHERE json_valid(r.labels) AND NOT EXISTS (SELECT 1 FROM json_each(r.labels) j WHERE j.key = l.key);

-- Threads: as many whole-run rows as runs.nr_threads, as many rows in
-- each interval as intervals.nr_threads, ordinals 0..n-1 in each span,
-- and no thread row in an interval the run lacks.
SELECT 'run ' || r.id || ': nr_threads ' || r.nr_threads || ' but ' || count(t.tid) || ' whole-run thread rows'
FROM runs r LEFT JOIN threads t ON t.run_pk = r.pk AND t.interval_seq = -1
GROUP BY r.pk HAVING count(t.tid) <> r.nr_threads;
SELECT 'run ' || r.id || ': interval ' || i.seq || ' has nr_threads ' || i.nr_threads || ' but ' || count(t.tid) || ' thread rows'
FROM runs r JOIN intervals i ON i.run_pk = r.pk
LEFT JOIN threads t ON t.run_pk = r.pk AND t.interval_seq = i.seq
GROUP BY r.pk, i.seq HAVING count(t.tid) <> i.nr_threads;
SELECT 'run ' || r.id || ': span ' || t.interval_seq || ' thread ordinals are not 0..' || (count(*) - 1)
FROM runs r JOIN threads t ON t.run_pk = r.pk
GROUP BY r.pk, t.interval_seq HAVING min(t.ordinal) <> 0 OR max(t.ordinal) <> count(*) - 1;
SELECT 'run ' || r.id || ': thread rows in interval ' || t.interval_seq || ', which the run lacks'
FROM runs r JOIN threads t ON t.run_pk = r.pk
WHERE t.interval_seq <> -1
  AND NOT EXISTS (SELECT 1 FROM intervals i WHERE i.run_pk = r.pk AND i.seq = t.interval_seq)
GROUP BY r.pk, t.interval_seq;

-- Counters: every thread row has one per event of its run, no more.
SELECT 'run ' || r.id || ': thread ' || t.tid || ' in span ' || t.interval_seq || ' has '
       || count(c.event) || ' counters for ' || json_array_length(r.event_names) || ' events'
FROM runs r JOIN threads t ON t.run_pk = r.pk
LEFT JOIN counters c ON c.run_pk = t.run_pk AND c.interval_seq = t.interval_seq AND c.tid = t.tid
  AND c.event >= 0 AND c.event < json_array_length(r.event_names)
GROUP BY t.run_pk, t.interval_seq, t.tid HAVING count(c.event) <> json_array_length(r.event_names);
SELECT 'run ' || r.id || ': counter of event ' || c.event || ', beyond its ' || json_array_length(r.event_names) || ' events'
FROM runs r JOIN counters c ON c.run_pk = r.pk
WHERE c.event < 0 OR c.event >= json_array_length(r.event_names);

-- Metrics: ordinals 0..n-1, each in a span the run has; every tree of a
-- run has the same nodes (the model's), and a run with trees has the
-- process's tree in every span that has thread rows.
SELECT 'run ' || r.id || ': a ' || m.scope || ' tree has ' || count(*) || ' nodes, another ' || n.most
FROM runs r JOIN metrics m ON m.run_pk = r.pk
JOIN (SELECT run_pk, max(c) AS most FROM (SELECT run_pk, count(*) AS c FROM metrics
      GROUP BY run_pk, scope, scope_key, interval_seq) GROUP BY run_pk) n ON n.run_pk = r.pk
GROUP BY r.pk, m.scope, m.scope_key, m.interval_seq HAVING count(*) <> n.most;
SELECT 'run ' || r.id || ': no process tree in span ' || t.interval_seq
FROM runs r JOIN threads t ON t.run_pk = r.pk
WHERE EXISTS (SELECT 1 FROM metrics m WHERE m.run_pk = r.pk)
  AND NOT EXISTS (SELECT 1 FROM metrics m WHERE m.run_pk = r.pk AND m.scope = 'process'
                  AND m.interval_seq = t.interval_seq)
GROUP BY r.pk, t.interval_seq;
SELECT 'run ' || r.id || ': metric ordinals are not 0..' || (count(*) - 1)
FROM runs r JOIN metrics m ON m.run_pk = r.pk
GROUP BY r.pk HAVING min(m.ordinal) <> 0 OR max(m.ordinal) <> count(*) - 1;
SELECT 'run ' || r.id || ': metrics in interval ' || m.interval_seq || ', which the run lacks'
FROM runs r JOIN metrics m ON m.run_pk = r.pk
WHERE m.interval_seq <> -1
  AND NOT EXISTS (SELECT 1 FROM intervals i WHERE i.run_pk = r.pk AND i.seq = m.interval_seq)
GROUP BY r.pk, m.interval_seq;

-- Profiles: frames and stacks belong to a profile row, ordinals and
-- frame indexes are 0..n-1.
SELECT 'run ' || r.id || ': profile rows without a profile'
FROM runs r WHERE NOT EXISTS (SELECT 1 FROM profiles p WHERE p.run_pk = r.pk)
  AND (EXISTS (SELECT 1 FROM profile_frames f WHERE f.run_pk = r.pk)
       OR EXISTS (SELECT 1 FROM profile_stacks s WHERE s.run_pk = r.pk));
SELECT 'run ' || r.id || ': profile frame indexes are not 0..' || (count(*) - 1)
FROM runs r JOIN profile_frames f ON f.run_pk = r.pk
GROUP BY r.pk HAVING min(f.idx) <> 0 OR max(f.idx) <> count(*) - 1;
SELECT 'run ' || r.id || ': profile stack ordinals are not 0..' || (count(*) - 1)
FROM runs r JOIN profile_stacks s ON s.run_pk = r.pk
GROUP BY r.pk HAVING min(s.ordinal) <> 0 OR max(s.ordinal) <> count(*) - 1;
