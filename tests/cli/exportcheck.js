// Load a tf-export model with the real consumer libraries and print its
// predictions for rows of raw features, one JSON array per row:
//   node exportcheck.js tfjs DIR ROWS.json
//   node exportcheck.js onnx FILE ROWS.json
// ROWS.json is a JSON array of rows (arrays of numbers), or for models
// of two inputs objects {"x": [numbers], "ids": [ids]} (a model of
// tokens alone: {"ids": [...]}): int64 for ONNX, float32 for
// TensorFlow.js.  The modules
// (@tensorflow/tfjs-core, -layers, -backend-cpu; onnxruntime-node) are
// found through NODE_PATH.
'use strict';
const fs = require('fs');
const path = require('path');

async function main() {
  const [kind, where, rowsFile] = process.argv.slice(2);
  const rows = JSON.parse(fs.readFileSync(rowsFile, 'utf8'));
  const named = !Array.isArray(rows[0]);
  const width = named ? 0 : rows[0].length;
  const flat = named ? null : Float32Array.from(rows.flat());
  let out, cols;
  if (kind === 'tfjs') {
    const tf = require('@tensorflow/tfjs-core');
    require('@tensorflow/tfjs-backend-cpu');
    const layers = require('@tensorflow/tfjs-layers');
    await tf.setBackend('cpu');
    const json = JSON.parse(fs.readFileSync(path.join(where, 'model.json'), 'utf8'));
    // What the file:// handler of tfjs-node does: weights of every
    // manifest group, concatenated in order.
    const specs = [], bufs = [];
    for (const g of json.weightsManifest) {
      specs.push(...g.weights);
      for (const p of g.paths) bufs.push(fs.readFileSync(path.join(where, p)));
    }
    const all = Buffer.concat(bufs);
    const weightData = all.buffer.slice(all.byteOffset, all.byteOffset + all.length);
    const model = await layers.loadLayersModel(tf.io.fromMemory({
      modelTopology: json.modelTopology, weightSpecs: specs, weightData }));
    // a model of two inputs (x, ids: sequences of varying length)
    // takes them by name, the ids as float32
    const y = model.predict(named
      ? model.inputNames.map((name) => tf.tensor2d(
        Float32Array.from(rows.flatMap((r) => r[name])),
        [rows.length, rows[0][name].length]))
      : tf.tensor2d(flat, [rows.length, width]));
    out = await y.data();
    cols = y.shape[1];
  } else if (kind === 'onnx') {
    const ort = require('onnxruntime-node');
    const s = await ort.InferenceSession.create(where);
    const feeds = {};
    if (named) {
      for (const name of s.inputNames) {
        const w = rows[0][name].length;
        const v = rows.flatMap((r) => r[name]);
        feeds[name] = name === 'ids'
          ? new ort.Tensor('int64', BigInt64Array.from(v.map(BigInt)), [rows.length, w])
          : new ort.Tensor('float32', Float32Array.from(v), [rows.length, w]);
      }
    } else {
      feeds[s.inputNames[0]] = new ort.Tensor('float32', flat, [rows.length, width]);
    }
    const res = await s.run(feeds);
    const t = res[s.outputNames[0]];
    out = t.data;
    cols = t.dims[1];
  } else {
    throw new Error('kind must be tfjs or onnx');
  }
  for (let r = 0; r < rows.length; r++) {
    console.log(JSON.stringify(Array.from(out.slice(r * cols, (r + 1) * cols))));
  }
}

main().catch((e) => { console.error('exportcheck: ' + e.message); process.exit(1); });
