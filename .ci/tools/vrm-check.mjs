// Load VRM files with three.js's GLTFLoader and @pixiv/three-vrm's VRMLoaderPlugin (npm `three`,
// `@pixiv/three-vrm`), in node, and check what a VRM application would see:
//   - the file loads as the VRM it is: VRM 1.0 (`VRMC_vrm`, three-vrm's meta version "1", meta name
//     and authors read) or VRM 0.x (`VRM`, meta version "0", title read);
//   - every humanoid bone the file lists resolves in three-vrm to the very node the file names
//     (GLTFLoader's node association; a 0.x thumb's role is 1.0's one joint down, as three-vrm
//     names it), and every required bone resolves;
//   - with a humanoid map (skelport's JSON, `{"strip_prefixes": [...], "humanoid": {role: bone}}`),
//     each of the map's roles resolves to a node of that bone's name: the bone skelport chose.
// Usage: node vrm-check.mjs FILE.vrm[=MAP.json] ...  — one line per file; exits 1 on any failure.
import fs from 'fs';
import { GLTFLoader } from 'three/addons/loaders/GLTFLoader.js';
import { VRMLoaderPlugin } from '@pixiv/three-vrm';

const REQUIRED = ['hips', 'spine', 'head', 'leftUpperLeg', 'leftLowerLeg', 'leftFoot', 'rightUpperLeg', 'rightLowerLeg',
  'rightFoot', 'leftUpperArm', 'leftLowerArm', 'leftHand', 'rightUpperArm', 'rightLowerArm', 'rightHand'];

function glbJson(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const len = view.getUint32(12, true);
  return JSON.parse(new TextDecoder().decode(bytes.subarray(20, 20 + len)));
}

async function check(file, mapFile) {
  const bytes = new Uint8Array(fs.readFileSync(file));
  const json = glbJson(bytes);
  const v0 = json.extensions?.VRM;
  // VRM 0.x lists {bone, node}; three-vrm gives its roles 1.0's names (thumbs one joint down).
  const thumb = { ThumbProximal: 'ThumbMetacarpal', ThumbIntermediate: 'ThumbProximal' };
  const rename = (b) => b.replace(/(Thumb(?:Proximal|Intermediate))$/, (m) => thumb[m]);
  const listed = v0
    ? Object.fromEntries((v0.humanoid?.humanBones ?? []).map((e) => [rename(e.bone), { node: e.node }]))
    : json.extensions?.VRMC_vrm?.humanoid?.humanBones ?? {};
  const loader = new GLTFLoader();
  loader.register((parser) => new VRMLoaderPlugin(parser));
  const buf = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  const gltf = await loader.parseAsync(buf, '');
  const vrm = gltf.userData.vrm;
  const problems = [];
  if (!vrm) throw new Error('three-vrm found no VRM');
  const version = v0 ? '0' : '1';
  if (vrm.meta?.metaVersion !== version) problems.push(`meta version ${vrm.meta?.metaVersion}, not ${version} (the file is VRM ${v0 ? '0.x' : '1.0'})`);
  const name = v0 ? vrm.meta?.title : vrm.meta?.name;
  const authors = v0 ? [vrm.meta?.author] : vrm.meta?.authors;
  if (!name) problems.push(`meta.${v0 ? 'title' : 'name'} not read`);
  if (!(authors?.length > 0 && authors[0])) problems.push(`meta.${v0 ? 'author' : 'authors'} not read`);
  const nodeOf = (obj) => gltf.parser.associations.get(obj)?.nodes;
  let resolved = 0;
  for (const [role, { node }] of Object.entries(listed)) {
    const obj = vrm.humanoid.getRawBoneNode(role);
    if (!obj) { problems.push(`${role}: three-vrm has no node`); continue; }
    if (nodeOf(obj) !== node) { problems.push(`${role}: three-vrm's node is ${nodeOf(obj)}, the file says ${node}`); continue; }
    resolved++;
  }
  for (const role of REQUIRED) {
    if (!vrm.humanoid.getRawBoneNode(role)) problems.push(`required ${role} does not resolve`);
  }
  let mapped = '';
  if (mapFile) {
    const map = JSON.parse(fs.readFileSync(mapFile, 'utf8'));
    const prefixes = ['', ...(map.strip_prefixes ?? [])];
    let same = 0;
    for (const [role, bone] of Object.entries(map.humanoid)) {
      const obj = vrm.humanoid.getRawBoneNode(role);
      const name = obj ? json.nodes[nodeOf(obj)]?.name : undefined;
      if (name === undefined) continue; // a role the rig does not have (the map is shared by variants)
      if (!prefixes.some((p) => name === p + bone)) problems.push(`${role}: node "${name}", the map says "${bone}"`);
      else same++;
    }
    mapped = `, ${same} match ${mapFile.split('/').pop()}`;
  }
  const line = `${file}: VRM ${v0 ? '0.x' : '1.0'} (three-vrm meta ${vrm.meta?.metaVersion}), meta "${name}" by ${JSON.stringify(authors)}, ` +
    `${resolved}/${Object.keys(listed).length} humanoid bones resolve to the file's nodes${mapped}`;
  return { line, problems };
}

let bad = 0;
for (const arg of process.argv.slice(2)) {
  const [file, map] = arg.split('=');
  try {
    const { line, problems } = await check(file, map);
    console.log(problems.length ? `${line}  <-- FAIL` : line);
    for (const p of problems.slice(0, 20)) console.log(`  ${p}`);
    if (problems.length) bad++;
  } catch (e) {
    console.log(`${file}: three-vrm FAILED: ${e.stack || e}`);
    bad++;
  }
}
process.exit(bad ? 1 : 0);
