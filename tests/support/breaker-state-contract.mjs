// The contract of DurableObjectBreakerState (issue 20 §4): the newest report wins, one probe lease at a time, the
// fleet's failures in a row counted while closed, bad input refused by name; the object judges by its own clock
// (no reporter's time is truth) and bounds what it keeps. Runs anywhere — Node over a stand-in storage, a real
// Durable Object in workerd — and returns its checks, so each host asserts them its own way. `make(options)`: a
// DurableObjectBreakerState over a fresh storage (or a fresh prefix of one) with those options; the contract's
// object runs on a clock of its own (`now`), set before each step, so that a lease's end is an event, not a wait.
export async function runBreakerStateContract(make) {
  let t = 0;
  const st = make({ now: () => t });
  const at = (ms, p) => ((t = ms), p());
  const checks = [];
  const check = (name, ok, detail = '') => checks.push({ name, ok: !!ok, detail: String(detail) });
  const same = (name, got, want) => check(name, JSON.stringify(got) === JSON.stringify(want), JSON.stringify(got));
  const refused = async (name, p, want) => {
    try {
      await p;
      check(name, false, 'not refused');
    } catch (e) {
      check(name, `${e.name} ${e.code} ${e.field}` === want, `${e.name} ${e.code} ${e.field}`);
    }
  };
  t = 100;
  same('nothing stored: closed since 0', await st.read('s'), { state: 'closed', sinceMs: 0, failures: 0 });
  same('a newer report is kept', await st.report('s', { state: 'open', sinceMs: 100 }), { state: 'open', sinceMs: 100, failures: 0 });
  same('an older one is not', await st.report('s', { state: 'closed', sinceMs: 90 }), { state: 'open', sinceMs: 100, failures: 0 });
  same('a due probe gets the lease', await at(600, () => st.acquireProbe('s', { holder: 'A', sinceMs: 100, nowMs: 600, leaseMs: 1000 })), { granted: true, snapshot: { state: 'half_open', sinceMs: 600, failures: 0 } });
  same('one prober at a time', await at(650, () => st.acquireProbe('s', { holder: 'B', sinceMs: 100, nowMs: 650, leaseMs: 1000 })), { granted: false, snapshot: { state: 'half_open', sinceMs: 600, failures: 0 } });
  check('its holder again', (await at(660, () => st.acquireProbe('s', { holder: 'A', sinceMs: 600, nowMs: 660, leaseMs: 1000 }))).granted === true);
  check('a lease that ran out goes to another', (await at(1660, () => st.acquireProbe('s', { holder: 'B', sinceMs: 600, nowMs: 1660, leaseMs: 1000 }))).granted === true);
  same('the probe answered: closed', await at(1700, () => st.report('s', { state: 'closed', sinceMs: 1700 })), { state: 'closed', sinceMs: 1700, failures: 0 });
  check('a stale open loses', (await st.report('s', { state: 'open', sinceMs: 1500 })).state === 'closed');
  same('a stale prober adopts the newer close instead', await at(2100, () => st.acquireProbe('s', { holder: 'C', sinceMs: 1500, nowMs: 2100, leaseMs: 1000 })), { granted: false, snapshot: { state: 'closed', sinceMs: 1700, failures: 0 } });
  same('no lease while it is closed (the asker probes alone; nobody is held back)', await at(2150, () => st.acquireProbe('s', { holder: 'A', sinceMs: 2000, leaseMs: 60_000 })), { granted: false, snapshot: { state: 'closed', sinceMs: 1700, failures: 0 } });
  check('a probe\'s failure ends its lease', (await at(2200, () => st.report('s', { state: 'open', sinceMs: 2200 }))).state === 'open'
    && (await at(2800, () => st.acquireProbe('s', { holder: 'A', sinceMs: 2200, nowMs: 2800, leaseMs: 60_000 }))).granted
    && (await at(2900, () => st.report('s', { state: 'open', sinceMs: 2900 }))).state === 'open'
    && (await at(3500, () => st.acquireProbe('s', { holder: 'B', sinceMs: 2900, nowMs: 3500, leaseMs: 1000 }))).granted);
  t = 4000;
  check('failures in a row counted while closed', (await st.report('f', { state: 'closed', sinceMs: 0 }, 'failure')).failures === 1
    && (await st.report('f', { state: 'closed', sinceMs: 0 }, 'failure')).failures === 2);
  check('an answer starts them again', (await st.report('f', { state: 'closed', sinceMs: 0 }, 'success')).failures === 0);
  await st.report('f', { state: 'closed', sinceMs: 0 }, 'failure');
  same('a new state starts them again', await st.report('f', { state: 'open', sinceMs: 10 }), { state: 'open', sinceMs: 10, failures: 0 });
  check('not counted while open', (await st.report('f', { state: 'open', sinceMs: 10 }, 'failure')).failures === 0);
  same('servers apart', await st.read('other'), { state: 'closed', sinceMs: 0, failures: 0 });
  await refused('server named', st.read(''), 'TypeError invalid_type server');
  await refused('snapshot.state named', st.report('s', { state: 'ajar', sinceMs: 1 }), 'RangeError invalid_value snapshot.state');
  await refused('snapshot.sinceMs named', st.report('s', { state: 'open', sinceMs: -1 }), 'RangeError invalid_value snapshot.sinceMs');
  await refused('an unknown field named', st.report('s', { state: 'open', sinceMs: 1, budgetTokens: 1 }), 'TypeError unknown_option snapshot.budgetTokens');
  await refused('snapshot named', st.report('s', 'open'), 'TypeError invalid_type snapshot');
  await refused('counted named', st.report('f', { state: 'open', sinceMs: 10 }, 'maybe'), 'RangeError invalid_value counted');
  await refused('leaseMs named', st.acquireProbe('s', { holder: 'A', sinceMs: 0, nowMs: 0, leaseMs: 0 }), 'RangeError too_small leaseMs');
  await refused('holder named', st.acquireProbe('s', { sinceMs: 0, nowMs: 0, leaseMs: 1 }), 'TypeError invalid_type holder');
  await refused('leaseMs over a day named', st.acquireProbe('s', { holder: 'A', sinceMs: 0, leaseMs: 86_400_001 }), 'RangeError too_large leaseMs');
  await refused('a server name over 256 characters named', st.report('x'.repeat(257), { state: 'open', sinceMs: 1 }), 'RangeError too_large server');
  await refused('a holder over 128 characters named', st.acquireProbe('s', { holder: 'h'.repeat(129), sinceMs: 0, leaseMs: 1 }), 'RangeError too_large holder');

  // No reporter's time is truth: the object's clock (t) judges every report.
  t = 10_000;
  same('a report from the future is taken as received now', await st.report('future', { state: 'open', sinceMs: Number.MAX_SAFE_INTEGER }), { state: 'open', sinceMs: 10_000, failures: 0 });
  same('a later honest close wins over it', await at(10_400, () => st.report('future', { state: 'closed', sinceMs: 10_400 })), { state: 'closed', sinceMs: 10_400, failures: 0 });
  await at(11_000, () => st.report('future', { state: 'open', sinceMs: 10_000_000 }));
  same('after a report from the future the lease is granted, at the object\'s now', await at(11_600, () => st.acquireProbe('future', { holder: 'A', sinceMs: 11_000, nowMs: Number.MAX_SAFE_INTEGER, leaseMs: 1000 })), { granted: true, snapshot: { state: 'half_open', sinceMs: 11_600, failures: 0 } });
  check('a lease ends on the object\'s clock, whatever the holder\'s says', (await at(12_600, () => st.acquireProbe('future', { holder: 'B', sinceMs: 11_600, nowMs: 0, leaseMs: 1000 }))).granted === true);
  check('a reported half-open is not taken (a probe is out only by the lease)', (await at(13_000, () => st.report('h', { state: 'half_open', sinceMs: 13_000 }))).state === 'closed');

  // What it keeps is bounded: at most maxServers servers; one more is refused by name, the others still answer.
  const few = make({ now: () => t, maxServers: 3 });
  for (const name of ['a', 'b', 'c']) await few.report(name, { state: 'open', sinceMs: 1 });
  await refused('a server over maxServers is refused', few.report('d', { state: 'open', sinceMs: 1 }), 'RangeError too_many_servers server');
  same('a kept server still answers', await few.report('a', { state: 'closed', sinceMs: 2 }), { state: 'closed', sinceMs: 2, failures: 0 });
  same('reading an unknown server keeps nothing', await few.read('e'), { state: 'closed', sinceMs: 0, failures: 0 });

  const post = (body) => st.fetch(new Request('https://do/', { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body) }));
  const r = await post({ op: 'shout', server: 's' });
  check('fetch: an unknown op is a 400 naming it', r.status === 400 && (await r.json()).error.field === 'op', r.status);
  check('fetch: not JSON is a 400', (await post('not json')).status === 400);
  same('fetch: read', await (await post({ op: 'read', server: 'other' })).json(), { state: 'closed', sinceMs: 0, failures: 0 });
  const big = await post(`${JSON.stringify({ op: 'read', server: 'other' })}${' '.repeat(16 * 1024)}`);
  check('fetch: a body over 16 KiB is a 400, not read further', big.status === 400 && (await big.json()).error.code === 'too_large', big.status);
  const stray = await post({ op: 'report', server: 's', snapshot: { state: 'open', sinceMs: 1 }, untilMs: 9 });
  check('fetch: a field its op does not read is a 400 naming it', stray.status === 400 && (await stray.json()).error.field === 'body.untilMs', stray.status);
  return checks;
}
