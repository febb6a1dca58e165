// A target's process tree, read from /proc: the target, its process group, and every descendant
// (mcpgate starts each server in a process group of its own, so the group alone misses them). The
// HTTP benchmark uses it to say how much CPU a call costs on a machine whose CPUs the client and
// every target share, and to make sure nothing a target started outlives it. Linux only: elsewhere
// the tree is unknown and the CPU column stays empty.

import { readdir, readFile } from 'node:fs/promises';

/** USER_HZ: the unit of utime/stime in /proc/PID/stat; 100 on every Linux Node supports. */
const TICKS_PER_SECOND = 100;

export interface Proc {
  pid: number;
  ppid: number;
  pgrp: number;
  command: string;
  /** user + system CPU, ms */
  cpuMs: number;
}

async function processes(): Promise<Proc[] | undefined> {
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return undefined;
  }
  const procs = await Promise.all(
    entries
      .filter((e) => /^\d+$/.test(e))
      .map(async (pid): Promise<Proc | undefined> => {
        let stat: string;
        try {
          stat = await readFile(`/proc/${pid}/stat`, 'utf8');
        } catch {
          return undefined; // exited meanwhile
        }
        // The fields after the command name (which may hold spaces): [0] is field 3 (state), so ppid
        // (field 4) is [1], pgrp (5) is [2], utime (14) is [11] and stime (15) is [12].
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        if (f[0] === 'Z') return undefined; // a zombie has exited; only its parent's wait is missing
        return {
          pid: Number(pid),
          command: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
          ppid: Number(f[1]),
          pgrp: Number(f[2]),
          cpuMs: ((Number(f[11]) + Number(f[12])) * 1000) / TICKS_PER_SECOND,
        };
      }),
  );
  return procs.filter((p) => p !== undefined);
}

/** The live processes of `root`'s tree: its group and all its descendants; undefined without /proc. */
export async function tree(root: number): Promise<Proc[] | undefined> {
  const all = await processes();
  if (all === undefined) return undefined;
  const inTree = new Set<number>([root]);
  // Parents come before children often but not always (pids wrap): repeat until nothing is added.
  for (let added = true; added;) {
    added = false;
    for (const p of all) {
      if (!inTree.has(p.pid) && (p.pgrp === root || inTree.has(p.ppid))) {
        inTree.add(p.pid);
        added = true;
      }
    }
  }
  return all.filter((p) => inTree.has(p.pid));
}

/** Run time of all of a process's threads in ns, from schedstat (exact, where stat's utime/stime are ticks). */
async function runNs(pid: number): Promise<number | undefined> {
  try {
    const tasks = await readdir(`/proc/${pid}/task`);
    const times = await Promise.all(
      tasks.map(async (t) => Number((await readFile(`/proc/${pid}/task/${t}/schedstat`, 'utf8')).split(' ')[0])),
    );
    return times.reduce((a, b) => a + b, 0);
  } catch {
    return undefined; // no schedstat in this kernel, or the process exited meanwhile
  }
}

/** CPU used so far by the live processes of `root`'s tree, ms. */
export async function treeCpuMs(root: number): Promise<number | undefined> {
  const procs = await tree(root);
  if (procs === undefined) return undefined;
  const times = await Promise.all(
    procs.map(async (p) => {
      const ns = await runNs(p.pid);
      return ns === undefined ? p.cpuMs : ns / 1e6;
    }),
  );
  return times.reduce((a, b) => a + b, 0);
}

/** SIGKILLs each process of a tree listed earlier that still lives in the same process group; returns them. */
export async function killLeftovers(listed: readonly Proc[]): Promise<string[]> {
  const now = new Map(((await processes()) ?? []).map((p) => [p.pid, p]));
  const killed: string[] = [];
  for (const p of listed) {
    if (now.get(p.pid)?.pgrp !== p.pgrp) continue;
    try {
      process.kill(p.pid, 'SIGKILL');
      killed.push(`${p.pid} ${p.command}`);
    } catch {
      // Gone between the two looks.
    }
  }
  return killed;
}

/** Each live process of `root`'s tree with its command line and CPU so far (schedstat's exact figure where there is one), ms. */
export async function treeCpu(root: number): Promise<(Proc & { cmdline: string })[] | undefined> {
  const procs = await tree(root);
  if (procs === undefined) return undefined;
  return Promise.all(
    procs.map(async (p) => {
      const ns = await runNs(p.pid);
      const cmdline = await readFile(`/proc/${p.pid}/cmdline`, 'utf8').then(
        (t) => t.split('\u0000').join(' ').trim(),
        () => p.command,
      );
      return { ...p, cpuMs: ns === undefined ? p.cpuMs : ns / 1e6, cmdline };
    }),
  );
}

/** CPU used so far by one process: all its threads (schedstat, ns) and its main thread's user and system time (stat, ticks). */
export interface ProcessCpu {
  runMs: number;
  mainUserMs: number;
  mainSystemMs: number;
}

/** `pid`'s CPU so far, or undefined without /proc (or once it has exited). */
export async function processCpu(pid: number): Promise<ProcessCpu | undefined> {
  const runNsAll = await runNs(pid);
  const stat = await readFile(`/proc/${pid}/task/${pid}/stat`, 'utf8').catch(() => undefined);
  if (runNsAll === undefined || stat === undefined) return undefined;
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return {
    runMs: runNsAll / 1e6,
    mainUserMs: (Number(f[11]) * 1000) / TICKS_PER_SECOND,
    mainSystemMs: (Number(f[12]) * 1000) / TICKS_PER_SECOND,
  };
}
