// ONNX Runtime (npm onnxruntime-node, CPU execution provider) peer for
// bench/reference_vs_peers.sh: runs a float32 ONNX export of the vision tower
// (bench/peers/export_onnx.py) on one preprocessed image.
//
//   node run_onnxruntime.mjs MODEL.onnx --input IMAGE.npy [--repeat 3] [--threads 2]
//                            [--out EMBEDDING.npy]
//
// 2 intra-op threads, 1 inter-op thread, sequential execution, all graph optimisations.
// One untimed warm-up run, then --repeat timed runs of session.run() alone (the input
// tensor is created once). Prints one JSON object: min/median/max milliseconds per image.
import fs from "node:fs";
import os from "node:os";
import { createRequire } from "node:module";
import ort from "onnxruntime-node";

function usage(msg) {
  if (msg) console.error(`run_onnxruntime: ${msg}`);
  console.error("usage: node run_onnxruntime.mjs MODEL.onnx --input IMAGE.npy [--repeat N] " +
                "[--threads N] [--out EMBEDDING.npy]");
  process.exit(2);
}

function parseArgs(argv) {
  const a = { model: null, input: null, repeat: 3, threads: 2, out: null };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const next = () => (i + 1 < argv.length ? argv[++i] : usage(`${k} needs a value`));
    if (k === "--input") a.input = next();
    else if (k === "--repeat") a.repeat = Number(next());
    else if (k === "--threads") a.threads = Number(next());
    else if (k === "--out") a.out = next();
    else if (k.startsWith("--")) usage(`unknown option ${k}`);
    else if (a.model === null) a.model = k;
    else usage(`unexpected argument ${k}`);
  }
  if (!a.model || !a.input) usage("MODEL.onnx and --input are required");
  if (!(Number.isInteger(a.repeat) && a.repeat >= 1)) usage("--repeat must be >= 1");
  if (!(Number.isInteger(a.threads) && a.threads >= 1)) usage("--threads must be >= 1");
  return a;
}

// Minimal .npy (v1/v2/v3) reader for little-endian float32 C-order arrays.
function readNpyF32(path) {
  const buf = fs.readFileSync(path);
  if (buf.length < 10 || buf.toString("latin1", 0, 6) !== "\x93NUMPY") {
    throw new Error(`${path}: not a .npy file`);
  }
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const hstart = major === 1 ? 10 : 12;
  const header = buf.toString("latin1", hstart, hstart + hlen);
  const descr = /'descr':\s*'([^']*)'/.exec(header)?.[1];
  const fortran = /'fortran_order':\s*(True|False)/.exec(header)?.[1];
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  if (descr !== "<f4" || fortran !== "False" || shapeText === undefined) {
    throw new Error(`${path}: need a little-endian float32 C-order array, header ${header}`);
  }
  const shape = shapeText.split(",").map((s) => s.trim()).filter((s) => s).map(Number);
  const count = shape.reduce((x, y) => x * y, 1);
  const start = hstart + hlen;
  if (buf.length - start !== count * 4) throw new Error(`${path}: data size mismatch`);
  const data = new Float32Array(count);
  for (let i = 0; i < count; i++) data[i] = buf.readFloatLE(start + 4 * i);
  return { shape, data };
}

function writeNpyF32(path, shape, data) {
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${shape.join(", ")}${
    shape.length === 1 ? "," : ""}), }`;
  const total = 10 + header.length + 1;
  header += " ".repeat((64 - (total % 64)) % 64) + "\n";
  const head = Buffer.alloc(10);
  head.write("\x93NUMPY", 0, "latin1");
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  const body = Buffer.alloc(data.length * 4);
  for (let i = 0; i < data.length; i++) body.writeFloatLE(data[i], 4 * i);
  fs.writeFileSync(path, Buffer.concat([head, Buffer.from(header, "latin1"), body]));
}

const args = parseArgs(process.argv.slice(2));
const image = readNpyF32(args.input);
let shape = image.shape;
if (shape.length === 3) shape = [1, ...shape];
if (shape.length !== 4 || shape[0] !== 1) usage(`input shape [${image.shape}] is not [3,S,S]`);

const require = createRequire(import.meta.url);
const ortVersion = require("onnxruntime-node/package.json").version;

const t0 = performance.now();
const session = await ort.InferenceSession.create(args.model, {
  executionProviders: ["cpu"],
  intraOpNumThreads: args.threads,
  interOpNumThreads: 1,
  executionMode: "sequential",
  graphOptimizationLevel: "all",
});
const loadMs = performance.now() - t0;
const inputName = session.inputNames[0];
const outputName = session.outputNames[0];
const feeds = { [inputName]: new ort.Tensor("float32", image.data, shape) };

// Busy and total jiffies of all CPUs (/proc/stat), to tell how much of the machine other
// processes took during each timed run; null off Linux.
function cpuTicks() {
  try {
    const v = fs.readFileSync("/proc/stat", "latin1").split("\n")[0].trim().split(/\s+/)
      .slice(1, 9).map(Number);
    const total = v.reduce((a, b) => a + b, 0);
    return { busy: total - v[3] - v[4], total };
  } catch {
    return null;
  }
}
const HZ = 100;  // USER_HZ on Linux
function othersPercent(t0, t1, ownMicros) {
  if (!t0 || !t1 || t1.total <= t0.total) return null;
  const other = (t1.busy - t0.busy) / HZ - ownMicros / 1e6;
  return Math.max(0, (100 * other) / ((t1.total - t0.total) / HZ));
}

let result = await session.run(feeds);  // warm-up (not timed)
const times = [];
const others = [];
for (let r = 0; r < args.repeat; r++) {
  const c0 = process.cpuUsage();
  const k0 = cpuTicks();
  const t = performance.now();
  result = await session.run(feeds);
  times.push(performance.now() - t);
  const c = process.cpuUsage(c0);
  others.push(othersPercent(k0, cpuTicks(), c.user + c.system));
}
const out = result[outputName];
if (args.out) writeNpyF32(args.out, out.dims, out.data);
const sorted = [...times].sort((x, y) => x - y);
const mid = sorted.length >> 1;
const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
console.log(JSON.stringify({
  peer: "onnxruntime",
  version: `onnxruntime-node ${ortVersion}`,
  dtype: "float32",
  intra_op_threads: args.threads,
  inter_op_threads: 1,
  repeat: args.repeat,
  session_create_ms: loadMs,
  ms: times,
  others_cpu_percent: others,
  min_ms: sorted[0],
  median_ms: median,
  max_ms: sorted[sorted.length - 1],
  output_shape: out.dims,
  cpus: os.cpus().length,
}));
