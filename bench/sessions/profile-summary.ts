/**
 * Where a --cpu-prof profile's time went (issue 35): self time by module (a package under node_modules,
 * a source file, or node's own), the functions with the most self time, and the inclusive time of the
 * frames whose name matches BENCH_FRAMES (a regular expression), as shares of the busy (non-idle) time.
 *
 *   BENCH_FROM_FRAME=findActiveByTokenHash BENCH_FRAMES='onSend|serialize' npx tsx bench/sessions/profile-summary.ts <file.cpuprofile> [top]
 * BENCH_FROM_FRAME leaves out the samples before the first one with a frame of that name (the start-up).
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, topArg] = process.argv.slice(2);
if (!file) throw new Error('usage: profile-summary.ts <file.cpuprofile> [top]');
const top = Number(topArg ?? 40);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;

const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

const stackMatches = (id: number, pattern: RegExp) => {
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) if (pattern.test(byId.get(at)!.callFrame.functionName)) return true;
  return false;
};

// BENCH_FROM_FRAME: only the samples from the first one with a frame of that name (the start-up left out).
const from = process.env.BENCH_FROM_FRAME ? new RegExp(process.env.BENCH_FROM_FRAME) : undefined;
const firstCounted = from ? Math.max(0, profile.samples.findIndex((id) => stackMatches(id, from))) : 0;
const counted = (i: number) => i >= firstCounted;

const self = new Map<number, number>();
profile.samples.forEach((id, i) => {
  if (counted(i)) self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
});

const moduleOf = (url: string) => {
  if (!url) return '(native/VM)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  if (url.startsWith('node:')) return url;
  const src = /\/(src|bench|dist\/src)\/(.*)$/.exec(url);
  return src ? `${src[1]}/${src[2]}` : url;
};
const label = (node: ProfileNode) => `${node.callFrame.functionName || '(anonymous)'} ${moduleOf(node.callFrame.url)}:${node.callFrame.lineNumber + 1}`;

let busy = 0;
const bySelfModule = new Map<string, number>();
const bySelfFunction = new Map<string, number>();
for (const [id, time] of self) {
  const node = byId.get(id)!;
  const name = node.callFrame.functionName;
  if (name === '(idle)') continue;
  busy += time;
  const module = name === '(garbage collector)' ? '(garbage collector)' : name === '(program)' ? '(program)' : moduleOf(node.callFrame.url);
  bySelfModule.set(module, (bySelfModule.get(module) ?? 0) + time);
  bySelfFunction.set(label(node), (bySelfFunction.get(label(node)) ?? 0) + time);
}

const share = (time: number) => `${((100 * time) / busy).toFixed(1).padStart(5)}%`;
const print = (title: string, entries: Map<string, number>, n: number) => {
  console.log(`\n${title}`);
  for (const [name, time] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, n)) console.log(`${share(time)}  ${name}`);
};

const sampled = profile.timeDeltas.reduce((sum, delta, i) => sum + (counted(i) ? delta : 0), 0);
console.log(`busy ${(busy / 1000).toFixed(0)} ms of ${(sampled / 1000).toFixed(0)} ms sampled`);
print('self time by module', bySelfModule, top);
print('self time by function', bySelfFunction, top);

// Inclusive time of matching frames, each sample counted once per matching frame name.
const pattern = process.env.BENCH_FRAMES ? new RegExp(process.env.BENCH_FRAMES) : undefined;
if (pattern) {
  const inclusive = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    if (!counted(i)) return;
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const node = byId.get(at)!;
      const name = label(node);
      if (!seen.has(name) && pattern.test(name)) {
        seen.add(name);
        inclusive.set(name, (inclusive.get(name) ?? 0) + (profile.timeDeltas[i] ?? 0));
      }
    }
  });
  print(`inclusive time of frames matching ${pattern}`, inclusive, top);
}
