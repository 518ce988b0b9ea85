// The truth: what the tools did, as the servers wrote it (one JSON line per event, appended by every server
// process to one file). Read incrementally; indexed by intent (one intent per zoo case) and by server.
import fs from 'node:fs';
import { alive } from './procs.mjs';

export class Effects {
  constructor(file) {
    this.file = file;
    fs.writeFileSync(file, '');
    this.offset = 0;
    this.rest = '';
    this.byIntent = new Map();
    this.kills = new Map(); // server → kill events seen
  }

  /** Reads what was appended since the last look. */
  poll() {
    const fd = fs.openSync(this.file, 'r');
    try {
      const size = fs.fstatSync(fd).size;
      if (size <= this.offset) return;
      const buf = Buffer.alloc(size - this.offset);
      fs.readSync(fd, buf, 0, buf.length, this.offset);
      this.offset = size;
      const text = this.rest + buf.toString('utf8');
      const lines = text.split('\n');
      this.rest = lines.pop();
      for (const l of lines) {
        if (!l) continue;
        const e = JSON.parse(l);
        if (!this.byIntent.has(e.intent)) this.byIntent.set(e.intent, []);
        this.byIntent.get(e.intent).push(e);
        if (e.ev === 'kill') this.kills.set(e.srv, [...(this.kills.get(e.srv) ?? []), e]);
      }
    } finally {
      fs.closeSync(fd);
    }
  }

  of(intent) {
    this.poll();
    return this.byIntent.get(intent) ?? [];
  }

  /** Executions of this intent that started and have not ended, in a process that is still there. */
  running(intent) {
    const evs = this.of(intent);
    const done = new Set(evs.filter((e) => e.ev === 'end' || e.ev === 'kill').map((e) => e.exec));
    return evs.filter((e) => e.ev === 'start' && !done.has(e.exec) && alive(e.pid));
  }

  killsOf(server) {
    this.poll();
    return this.kills.get(server) ?? [];
  }

  /** The truth of one case. */
  truth(intent) {
    const evs = this.of(intent);
    return {
      effects: evs.filter((e) => e.ev === 'effect').map((e) => e.id),
      toolErrors: evs.filter((e) => e.ev === 'tool_error').length,
      starts: evs.filter((e) => e.ev === 'start').length,
      kills: evs.filter((e) => e.ev === 'kill').length,
    };
  }
}
