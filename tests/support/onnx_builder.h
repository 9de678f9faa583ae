// Builds small ONNX models in C++ with the protobuf API, for tests that need
// malformed or generated models no committed fixture holds (wrong attribute
// kinds, unknown IR versions, a Sum of 50,000 inputs). Every value is f32.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

namespace fuselens::test {

inline void declareF32(onnx::ValueInfoProto* v, const std::string& name,
                       const std::vector<int64_t>& dims) {
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  auto* shape = t->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

// A model of one node `op` named "n1" reading graph inputs `inputs` (all of
// shape `dims`) and writing graph output "y", at IR 8 and opset 17.
inline onnx::ModelProto oneNodeModel(const std::string& op, const std::vector<std::string>& inputs,
                                     const std::vector<int64_t>& dims,
                                     const std::vector<onnx::AttributeProto>& attrs = {}) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* opset = m.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("g");
  for (const std::string& in : inputs) declareF32(g->add_input(), in, dims);
  auto* n = g->add_node();
  n->set_name("n1");
  n->set_op_type(op);
  for (const std::string& in : inputs) n->add_input(in);
  n->add_output("y");
  for (const auto& a : attrs) *n->add_attribute() = a;
  g->add_output()->set_name("y");
  g->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::FLOAT);
  return m;
}

inline onnx::AttributeProto namedAttr(const std::string& name,
                                      onnx::AttributeProto::AttributeType type) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(type);
  return a;
}
inline onnx::AttributeProto intAttr(const std::string& name, int64_t v) {
  auto a = namedAttr(name, onnx::AttributeProto::INT);
  a.set_i(v);
  return a;
}
inline onnx::AttributeProto floatAttr(const std::string& name, float v) {
  auto a = namedAttr(name, onnx::AttributeProto::FLOAT);
  a.set_f(v);
  return a;
}
inline onnx::AttributeProto stringAttr(const std::string& name, const std::string& v) {
  auto a = namedAttr(name, onnx::AttributeProto::STRING);
  a.set_s(v);
  return a;
}
inline onnx::AttributeProto intsAttr(const std::string& name, const std::vector<int64_t>& v) {
  auto a = namedAttr(name, onnx::AttributeProto::INTS);
  for (int64_t x : v) a.add_ints(x);
  return a;
}

inline std::string bytesOf(const onnx::ModelProto& m) {
  std::string bytes;
  m.SerializeToString(&bytes);
  return bytes;
}

}  // namespace fuselens::test
