//! A tiny rigged FBX scene written in code, in binary and ASCII form: two bones (`Hips` and
//! `Spine`, a limb-node chain under a null `Armature`), a four-triangle strip skinned to them, a
//! bind pose. It is the seed of the malformed-input suite (`testdata/bad/fbx/`, which may not use
//! third-party files) and the reader's own tests. skelport writes no FBX otherwise: this is a
//! tree of FBX nodes and its two encodings (the binary record layout of FBX 7.4, and the ASCII
//! syntax), nothing more.

/// One property value of an FBX node.
#[derive(Debug, Clone, PartialEq)]
pub enum Prop {
    /// `I`: a 32-bit integer.
    Int(i32),
    /// `L`: a 64-bit integer (object ids).
    Long(i64),
    /// `D`: a double.
    Double(f64),
    /// `S`: a string (binary names use `Name\0\x01Class`; ASCII writes `Class::Name`).
    Str(String),
    /// `d`: an array of doubles.
    Doubles(Vec<f64>),
    /// `i`: an array of 32-bit integers.
    Ints(Vec<i32>),
}

/// One FBX node: a name, its properties and its children.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// The node's name (`Objects`, `Model`, `P` …).
    pub name: String,
    /// Its properties, in order.
    pub props: Vec<Prop>,
    /// Its child nodes.
    pub children: Vec<Node>,
}

fn node(name: &str, props: Vec<Prop>, children: Vec<Node>) -> Node {
    Node { name: name.into(), props, children }
}

fn s(v: &str) -> Prop {
    Prop::Str(v.into())
}

/// A `P:` property of a `Properties70` block.
fn p(name: &str, ty: &str, values: &[Prop]) -> Node {
    let mut props = vec![s(name), s(ty), s(""), s("")];
    props.extend_from_slice(values);
    node("P", props, vec![])
}

/// An object's name property: `Name\0\x01Class` as binary FBX stores it (the ASCII writer turns it
/// into `Class::Name`).
fn object_name(name: &str, class: &str) -> Prop {
    Prop::Str(format!("{name}\0\u{1}{class}"))
}

fn translation(v: [f64; 3]) -> Node {
    p("Lcl Translation", "Lcl Translation", &[Prop::Double(v[0]), Prop::Double(v[1]), Prop::Double(v[2])])
}

/// The `NodeAttribute` that makes a model a skeleton limb, as every exporter writes it.
fn limb_attribute(id: i64, name: &str) -> Node {
    node(
        "NodeAttribute",
        vec![Prop::Long(id), object_name(name, "NodeAttribute"), s("LimbNode")],
        vec![node("TypeFlags", vec![s("Skeleton")], vec![])],
    )
}

/// A column-major 4×4 translation matrix.
fn translate(v: [f64; 3]) -> Vec<f64> {
    vec![1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, v[0], v[1], v[2], 1.0]
}

/// The sample scene: FBX 7.4, +Y up, +Z front, centimetres (FBX's defaults).
pub fn scene() -> Vec<Node> {
    // Six vertices in two columns, 0..2 m up (200 cm); four triangles.
    let vertices: Vec<f64> =
        vec![-10.0, 0.0, 0.0, 10.0, 0.0, 0.0, -10.0, 100.0, 0.0, 10.0, 100.0, 0.0, -10.0, 200.0, 0.0, 10.0, 200.0, 0.0];
    let polygons = vec![0, 1, -4, 0, 3, -3, 2, 3, -6, 2, 5, -5];
    let normals: Vec<f64> = (0..12).flat_map(|_| [0.0, 0.0, 1.0]).collect();
    let uvs: Vec<f64> = vec![0.0, 0.0, 1.0, 0.0, 0.0, 0.5, 1.0, 0.5, 0.0, 1.0, 1.0, 1.0];
    let uv_index = vec![0, 1, 3, 0, 3, 2, 2, 3, 5, 2, 5, 4];
    let hips_at = [0.0, 0.0, 0.0];
    let spine_at = [0.0, 100.0, 0.0];
    let cluster = |id: i64, name: &str, indexes: Vec<i32>, weights: Vec<f64>, at: [f64; 3]| {
        node(
            "Deformer",
            vec![Prop::Long(id), object_name(name, "SubDeformer"), s("Cluster")],
            vec![
                node("Version", vec![Prop::Int(100)], vec![]),
                node("Indexes", vec![Prop::Ints(indexes)], vec![]),
                node("Weights", vec![Prop::Doubles(weights)], vec![]),
                node("Transform", vec![Prop::Doubles(translate([-at[0], -at[1], -at[2]]))], vec![]),
                node("TransformLink", vec![Prop::Doubles(translate(at))], vec![]),
            ],
        )
    };
    let int = |v: i32| Prop::Int(v);
    vec![
        node(
            "FBXHeaderExtension",
            vec![],
            vec![
                node("FBXHeaderVersion", vec![int(1003)], vec![]),
                node("FBXVersion", vec![int(7400)], vec![]),
                node("Creator", vec![s("skelport test sample")], vec![]),
            ],
        ),
        node(
            "GlobalSettings",
            vec![],
            vec![
                node("Version", vec![int(1000)], vec![]),
                node(
                    "Properties70",
                    vec![],
                    vec![
                        p("UpAxis", "int", &[int(1)]),
                        p("UpAxisSign", "int", &[int(1)]),
                        p("FrontAxis", "int", &[int(2)]),
                        p("FrontAxisSign", "int", &[int(1)]),
                        p("CoordAxis", "int", &[int(0)]),
                        p("CoordAxisSign", "int", &[int(1)]),
                        p("UnitScaleFactor", "double", &[Prop::Double(1.0)]),
                    ],
                ),
            ],
        ),
        node(
            "Objects",
            vec![],
            vec![
                node(
                    "Geometry",
                    vec![Prop::Long(100), object_name("Body", "Geometry"), s("Mesh")],
                    vec![
                        node("Vertices", vec![Prop::Doubles(vertices)], vec![]),
                        node("PolygonVertexIndex", vec![Prop::Ints(polygons)], vec![]),
                        node("GeometryVersion", vec![int(124)], vec![]),
                        node(
                            "LayerElementNormal",
                            vec![int(0)],
                            vec![
                                node("Version", vec![int(101)], vec![]),
                                node("MappingInformationType", vec![s("ByPolygonVertex")], vec![]),
                                node("ReferenceInformationType", vec![s("Direct")], vec![]),
                                node("Normals", vec![Prop::Doubles(normals)], vec![]),
                            ],
                        ),
                        node(
                            "LayerElementUV",
                            vec![int(0)],
                            vec![
                                node("Version", vec![int(101)], vec![]),
                                node("Name", vec![s("UVMap")], vec![]),
                                node("MappingInformationType", vec![s("ByPolygonVertex")], vec![]),
                                node("ReferenceInformationType", vec![s("IndexToDirect")], vec![]),
                                node("UV", vec![Prop::Doubles(uvs)], vec![]),
                                node("UVIndex", vec![Prop::Ints(uv_index)], vec![]),
                            ],
                        ),
                        node(
                            "Layer",
                            vec![int(0)],
                            vec![
                                node("Version", vec![int(100)], vec![]),
                                node(
                                    "LayerElement",
                                    vec![],
                                    vec![node("Type", vec![s("LayerElementNormal")], vec![]), node("TypedIndex", vec![int(0)], vec![])],
                                ),
                                node(
                                    "LayerElement",
                                    vec![],
                                    vec![node("Type", vec![s("LayerElementUV")], vec![]), node("TypedIndex", vec![int(0)], vec![])],
                                ),
                            ],
                        ),
                    ],
                ),
                node(
                    "Model",
                    vec![Prop::Long(200), object_name("Body", "Model"), s("Mesh")],
                    vec![node("Version", vec![int(232)], vec![])],
                ),
                node(
                    "Model",
                    vec![Prop::Long(300), object_name("Armature", "Model"), s("Null")],
                    vec![node("Version", vec![int(232)], vec![])],
                ),
                node(
                    "Model",
                    vec![Prop::Long(301), object_name("Hips", "Model"), s("LimbNode")],
                    vec![node("Version", vec![int(232)], vec![]), node("Properties70", vec![], vec![translation(hips_at)])],
                ),
                node(
                    "Model",
                    vec![Prop::Long(302), object_name("Spine", "Model"), s("LimbNode")],
                    vec![node("Version", vec![int(232)], vec![]), node("Properties70", vec![], vec![translation(spine_at)])],
                ),
                limb_attribute(601, "Hips"),
                limb_attribute(602, "Spine"),
                node(
                    "Deformer",
                    vec![Prop::Long(400), object_name("Skin", "Deformer"), s("Skin")],
                    vec![node("Version", vec![int(101)], vec![])],
                ),
                cluster(401, "Hips", vec![0, 1, 2, 3], vec![1.0, 1.0, 0.5, 0.5], hips_at),
                cluster(402, "Spine", vec![2, 3, 4, 5], vec![0.5, 0.5, 1.0, 1.0], spine_at),
                node(
                    "Pose",
                    vec![Prop::Long(500), object_name("BindPose", "Pose"), s("BindPose")],
                    vec![
                        node("Type", vec![s("BindPose")], vec![]),
                        node("Version", vec![int(100)], vec![]),
                        node("NbPoseNodes", vec![int(2)], vec![]),
                        node(
                            "PoseNode",
                            vec![],
                            vec![
                                node("Node", vec![Prop::Long(301)], vec![]),
                                node("Matrix", vec![Prop::Doubles(translate(hips_at))], vec![]),
                            ],
                        ),
                        node(
                            "PoseNode",
                            vec![],
                            vec![
                                node("Node", vec![Prop::Long(302)], vec![]),
                                node("Matrix", vec![Prop::Doubles(translate(spine_at))], vec![]),
                            ],
                        ),
                    ],
                ),
            ],
        ),
        node(
            "Connections",
            vec![],
            [
                (200, 0),
                (100, 200),
                (300, 0),
                (301, 300),
                (302, 301),
                (601, 301),
                (602, 302),
                (400, 100),
                (401, 400),
                (402, 400),
                (301, 401),
                (302, 402),
            ]
            .into_iter()
            .map(|(a, b)| node("C", vec![s("OO"), Prop::Long(a), Prop::Long(b)], vec![]))
            .collect(),
        ),
    ]
}

/// `scene` with a copy of its mesh: its geometry, model, skin and clusters, ids + 10 and names
/// `<name>2`, connected as the originals are (the clusters to the same bones). A scene of two
/// skinned meshes, which the writers' fuzz checks need (`skelport::fuzzing::write_checks`).
pub fn with_second_mesh(scene: &[Node]) -> Vec<Node> {
    const STEP: i64 = 10;
    let mut out = scene.to_vec();
    let copied = |n: &Node| n.name == "Geometry" || n.name == "Deformer" || (n.name == "Model" && n.props.get(2) == Some(&s("Mesh")));
    let mut ids = Vec::new();
    if let Some(objects) = out.iter_mut().find(|n| n.name == "Objects") {
        let copies: Vec<Node> = objects
            .children
            .iter()
            .filter(|n| copied(n))
            .map(|n| {
                let mut c = n.clone();
                if let [Prop::Long(id), Prop::Str(name), ..] = c.props.as_mut_slice() {
                    ids.push(*id);
                    *id += STEP;
                    *name = name.replacen('\0', "2\0", 1);
                }
                c
            })
            .collect();
        objects.children.extend(copies);
    }
    let moved = |id: i64| if ids.contains(&id) { id + STEP } else { id };
    if let Some(connections) = out.iter_mut().find(|n| n.name == "Connections") {
        let copies: Vec<Node> = connections
            .children
            .iter()
            .filter_map(|c| match c.props.as_slice() {
                [kind, Prop::Long(a), Prop::Long(b)] if ids.contains(a) || ids.contains(b) => {
                    Some(node("C", vec![kind.clone(), Prop::Long(moved(*a)), Prop::Long(moved(*b))], vec![]))
                }
                _ => None,
            })
            .collect();
        connections.children.extend(copies);
    }
    out
}

/// The binary form (FBX 7.4 record layout: 32-bit offsets, 13-byte null records).
pub fn binary(nodes: &[Node]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(crate::BINARY_MAGIC);
    out.extend_from_slice(&[0x1A, 0x00]);
    out.extend_from_slice(&7400u32.to_le_bytes());
    for n in nodes {
        write_record(n, &mut out);
    }
    out.extend_from_slice(&[0u8; 13]);
    out
}

fn write_record(n: &Node, out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(&[0u8; 12]);
    out.push(n.name.len() as u8);
    out.extend_from_slice(n.name.as_bytes());
    let props_at = out.len();
    for p in &n.props {
        match p {
            Prop::Int(v) => {
                out.push(b'I');
                out.extend_from_slice(&v.to_le_bytes());
            }
            Prop::Long(v) => {
                out.push(b'L');
                out.extend_from_slice(&v.to_le_bytes());
            }
            Prop::Double(v) => {
                out.push(b'D');
                out.extend_from_slice(&v.to_le_bytes());
            }
            Prop::Str(v) => {
                out.push(b'S');
                out.extend_from_slice(&(v.len() as u32).to_le_bytes());
                out.extend_from_slice(v.as_bytes());
            }
            Prop::Doubles(v) => {
                out.push(b'd');
                array_head(v.len(), 8, out);
                v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
            }
            Prop::Ints(v) => {
                out.push(b'i');
                array_head(v.len(), 4, out);
                v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
            }
        }
    }
    let props_len = (out.len() - props_at) as u32;
    if !n.children.is_empty() {
        for c in &n.children {
            write_record(c, out);
        }
        out.extend_from_slice(&[0u8; 13]);
    }
    let end = out.len() as u32;
    out[start..start + 4].copy_from_slice(&end.to_le_bytes());
    out[start + 4..start + 8].copy_from_slice(&(n.props.len() as u32).to_le_bytes());
    out[start + 8..start + 12].copy_from_slice(&props_len.to_le_bytes());
}

/// An uncompressed array's head: length, encoding 0, byte length.
fn array_head(len: usize, size: usize, out: &mut Vec<u8>) {
    out.extend_from_slice(&(len as u32).to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&((len * size) as u32).to_le_bytes());
}

/// The ASCII form.
pub fn ascii(nodes: &[Node]) -> String {
    let mut out = String::from("; FBX 7.4.0 project file\n; written by skelport's test sample\n\n");
    for n in nodes {
        write_ascii(n, 0, &mut out);
    }
    out
}

fn write_ascii(n: &Node, depth: usize, out: &mut String) {
    let indent = "\t".repeat(depth);
    out.push_str(&indent);
    out.push_str(&n.name);
    out.push(':');
    let mut array = None;
    let values: Vec<String> = n
        .props
        .iter()
        .filter_map(|p| match p {
            Prop::Int(v) => Some(v.to_string()),
            Prop::Long(v) => Some(v.to_string()),
            Prop::Double(v) => Some(format!("{v:?}")),
            Prop::Str(v) => Some(match v.split_once("\0\u{1}") {
                Some((name, class)) => format!("\"{class}::{name}\""),
                None => format!("\"{v}\""),
            }),
            Prop::Doubles(v) => {
                array = Some((v.len(), v.iter().map(|x| format!("{x:?}")).collect::<Vec<_>>().join(",")));
                None
            }
            Prop::Ints(v) => {
                array = Some((v.len(), v.iter().map(i32::to_string).collect::<Vec<_>>().join(",")));
                None
            }
        })
        .collect();
    if let Some((len, items)) = array {
        out.push_str(&format!(" *{len} {{\n{indent}\ta: {items}\n{indent}}}\n"));
        return;
    }
    if !values.is_empty() {
        out.push(' ');
        out.push_str(&values.join(", "));
    }
    if n.children.is_empty() && !values.is_empty() {
        out.push('\n');
        return;
    }
    out.push_str(" {\n");
    for c in &n.children {
        write_ascii(c, depth + 1, out);
    }
    out.push_str(&indent);
    out.push_str("}\n");
}
