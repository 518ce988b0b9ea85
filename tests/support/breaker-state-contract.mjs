// The contract of DurableObjectBreakerState (issue 20 §4): the newest report wins, one probe lease at a time, the
// fleet's failures in a row counted while closed, bad input refused by name. Runs anywhere — Node over a stand-in
// storage, a real Durable Object in workerd — and returns its checks, so each host asserts them its own way.
export async function runBreakerStateContract(st) {
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
  same('nothing stored: closed since 0', await st.read('s'), { state: 'closed', sinceMs: 0, failures: 0 });
  same('a newer report is kept', await st.report('s', { state: 'open', sinceMs: 100 }), { state: 'open', sinceMs: 100, failures: 0 });
  same('an older one is not', await st.report('s', { state: 'closed', sinceMs: 90 }), { state: 'open', sinceMs: 100, failures: 0 });
  same('a due probe gets the lease', await st.acquireProbe('s', { holder: 'A', sinceMs: 100, nowMs: 600, leaseMs: 1000 }), { granted: true, snapshot: { state: 'half_open', sinceMs: 600, failures: 0 } });
  same('one prober at a time', await st.acquireProbe('s', { holder: 'B', sinceMs: 100, nowMs: 650, leaseMs: 1000 }), { granted: false, snapshot: { state: 'half_open', sinceMs: 600, failures: 0 } });
  check('its holder again', (await st.acquireProbe('s', { holder: 'A', sinceMs: 600, nowMs: 660, leaseMs: 1000 })).granted === true);
  check('a lease that ran out goes to another', (await st.acquireProbe('s', { holder: 'B', sinceMs: 600, nowMs: 1660, leaseMs: 1000 })).granted === true);
  same('the probe answered: closed', await st.report('s', { state: 'closed', sinceMs: 1700 }), { state: 'closed', sinceMs: 1700, failures: 0 });
  check('a stale open loses', (await st.report('s', { state: 'open', sinceMs: 1500 })).state === 'closed');
  same('a stale prober adopts the newer close instead', await st.acquireProbe('s', { holder: 'C', sinceMs: 1500, nowMs: 2100, leaseMs: 1000 }), { granted: false, snapshot: { state: 'closed', sinceMs: 1700, failures: 0 } });
  check('a probe\'s failure ends its lease', (await st.acquireProbe('s', { holder: 'A', sinceMs: 1700, nowMs: 2200, leaseMs: 60_000 })).granted
    && (await st.report('s', { state: 'open', sinceMs: 2300 })).state === 'open'
    && (await st.acquireProbe('s', { holder: 'B', sinceMs: 2300, nowMs: 2900, leaseMs: 1000 })).granted);
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
  const post = (body) => st.fetch(new Request('https://do/', { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body) }));
  const r = await post({ op: 'shout', server: 's' });
  check('fetch: an unknown op is a 400 naming it', r.status === 400 && (await r.json()).error.field === 'op', r.status);
  check('fetch: not JSON is a 400', (await post('not json')).status === 400);
  same('fetch: read', await (await post({ op: 'read', server: 'other' })).json(), { state: 'closed', sinceMs: 0, failures: 0 });
  return checks;
}
