// The host code of the Loop and Scan steps of a program's launcher (see
// cuda_program_launcher.cpp, which emits the rest): the host counts
// iterations, reads conditions back, swaps carried values and places slices.
#include <ostream>

#include "codegen/cuda/cuda_program_emit.h"
#include "codegen/export/export_c.h"

namespace fuselens::cudaprog {
namespace {

// Rows of `bytes` bytes, `rows` of them, `pitch` bytes apart in the whole
// tensor: one step's slice along an axis.
struct Strided {
  int64_t rows = 1, bytes = 0, pitch = 0;
};
Strided strided(const CudaSlot& whole, int64_t axis) {
  Strided s;
  s.bytes = int64_t(dtypeSize(whole.dtype));
  for (size_t d = 0; d < whole.shape.size(); ++d)
    (int64_t(d) < axis ? s.rows : s.bytes) *= int64_t(d) == axis ? 1 : whole.shape[d];
  s.pitch = s.bytes * whole.shape[size_t(axis)];
  return s;
}

}  // namespace

void emitRunShape(std::ostream& o, int slot, const std::vector<int64_t>& shape,
                  const std::string& pad, const std::string& lead) {
  o << pad << "ctx->runRank[" << slot << "] = " << shape.size() << ";\n";
  for (size_t d = 0; d < shape.size() && d < 8; ++d)
    o << pad << "ctx->runDims[" << slot << "][" << d
      << "] = " << (d == 0 && !lead.empty() ? lead : std::to_string(shape[d]) + "LL") << ";\n";
}

// The host iterates: it writes the iteration number and condition, runs the
// body, reads its condition back, swaps the carried values and appends each
// scan slice.
void emitLoopStep(std::ostream& o, const CudaProgram& p, const CudaStep& st) {
  const CudaStep::LoopSlots& L = st.loop;
  const CudaBranch& body = st.branches.at(0);
  const size_t carried = L.a.size();
  auto bytes = [&](int s) { return p.slots[size_t(s)].bytes; };
  o << "  {  // " << st.node << ": the host counts iterations and reads the condition\n"
    << "    long long fl_max = 9223372036854775807LL, fl_c = 1, fl_iv = 0;\n"
    << "    unsigned char fl_one = 1;\n";
  if (st.in[0] >= 0)
    o << "    FL_CHECK(fl_read_int(v[" << st.in[0] << "], " << bytes(st.in[0])
      << ", s, &fl_max), \"read a trip count\");\n";
  if (st.in[1] >= 0)
    o << "    FL_CHECK(fl_read_int(v[" << st.in[1] << "], " << bytes(st.in[1])
      << ", s, &fl_c), \"read a condition\");\n";
  for (size_t i = 0; i < carried; ++i)
    o << "    FL_CHECK(cudaMemcpyAsync(v[" << L.a[i] << "], v[" << st.in[2 + i] << "], "
      << bytes(L.a[i]) << "LL, cudaMemcpyDeviceToDevice, s), \"copy a carried value\");\n";
  o << "    long long fl_it = 0;\n"
    << "    for (; fl_it < fl_max && fl_c != 0; ++fl_it) {\n"
    << "      if (fl_it >= (1LL << 24)) { snprintf(fl_error, sizeof fl_error, \"%s\", "
    << cString(st.node + ": ran more than 2^24 iterations without stopping") << "); return 1; }\n"
    << "      fl_iv = fl_it;\n"
    << "      FL_CHECK(cudaMemcpyAsync(v[" << L.iteration
    << "], &fl_iv, 8, cudaMemcpyHostToDevice, s), \"write the iteration number\");\n"
    << "      FL_CHECK(cudaMemcpyAsync(v[" << L.condition
    << "], &fl_one, 1, cudaMemcpyHostToDevice, s), \"write the condition\");\n"
    << "      unsigned char* bi[] = {";
  for (int s : body.inputs) o << "v[" << s << "], ";
  o << "nullptr};\n      unsigned char* bo[] = {v[" << L.condOut << "], ";
  for (int s : L.b) o << "v[" << s << "], ";
  for (int s : L.slices) o << "v[" << s << "], ";
  o << "nullptr};\n      if (int rc = fl_p" << body.program->id << "(ctx, bi, bo, s)) return rc;\n"
    << "      FL_CHECK(fl_read_int(v[" << L.condOut << "], " << bytes(L.condOut)
    << ", s, &fl_c), \"read the body's condition\");\n";
  for (size_t i = 0; i < carried; ++i)
    o << "      { unsigned char* t = v[" << L.a[i] << "]; v[" << L.a[i] << "] = v[" << L.b[i]
      << "]; v[" << L.b[i] << "] = t; }\n";
  for (size_t k = 0; k < L.slices.size(); ++k)
    o << "      FL_CHECK(cudaMemcpyAsync(v[" << st.out[carried + k] << "] + fl_it * "
      << bytes(L.slices[k]) << "LL, v[" << L.slices[k] << "], " << bytes(L.slices[k])
      << "LL, cudaMemcpyDeviceToDevice, s), \"append a scan slice\");\n";
  o << "    }\n";
  for (size_t i = 0; i < carried; ++i)
    o << "    FL_CHECK(cudaMemcpyAsync(v[" << st.out[i] << "], v[" << L.a[i] << "], "
      << bytes(L.a[i]) << "LL, cudaMemcpyDeviceToDevice, s), \"copy a carried value out\");\n";
  for (size_t k = 0; k < L.slices.size(); ++k) {
    const int out = st.out[carried + k];
    if (p.slots[size_t(out)].runShape)
      emitRunShape(o, out, p.slots[size_t(out)].shape, "    ", "fl_it");
  }
  o << "  }\n";
}

// The host steps through the sequence: a strided copy slices each scan
// input, the body runs, states swap, each output slice is copied in place.
void emitScanStep(std::ostream& o, const CudaProgram& p, const CudaStep& st) {
  const CudaStep::LoopSlots& L = st.loop;
  const CudaBranch& body = st.branches.at(0);
  const size_t states = L.a.size();
  const int64_t T = L.maxIterations;
  auto bytes = [&](int s) { return p.slots[size_t(s)].bytes; };
  o << "  {  // " << st.node << ": the host steps through " << T << " slices\n";
  for (size_t i = 0; i < states; ++i)
    o << "    FL_CHECK(cudaMemcpyAsync(v[" << L.a[i] << "], v[" << st.in[i] << "], "
      << bytes(L.a[i]) << "LL, cudaMemcpyDeviceToDevice, s), \"copy a state\");\n";
  o << "    for (long long fl_t = 0; fl_t < " << T << "LL; ++fl_t) {\n";
  auto copy = [&](bool in, int whole, int slice, int64_t axis, bool reverse) {
    const Strided g = strided(p.slots[size_t(whole)], axis);
    if (g.rows == 0 || g.bytes == 0) return;
    const std::string at = "(" + (reverse ? std::to_string(T - 1) + "LL - fl_t" : "fl_t") + ") * " +
                           std::to_string(g.bytes) + "LL";
    const std::string w = "v[" + std::to_string(whole) + "] + " + at;
    const std::string sl = "v[" + std::to_string(slice) + "]";
    o << "      FL_CHECK(cudaMemcpy2DAsync(" << (in ? sl : w) << ", " << (in ? g.bytes : g.pitch)
      << ", " << (in ? w : sl) << ", " << (in ? g.pitch : g.bytes) << ", " << g.bytes << ", "
      << g.rows << ", cudaMemcpyDeviceToDevice, s), \""
      << (in ? "slice a scan input" : "place a slice") << "\");\n";
  };
  for (size_t j = 0; j < L.sliceIn.size(); ++j)
    copy(true, st.in[states + j], L.sliceIn[j], L.inAxis[j], L.inReverse[j]);
  o << "      unsigned char* bi[] = {";
  for (int s : body.inputs) o << "v[" << s << "], ";
  o << "nullptr};\n      unsigned char* bo[] = {";
  for (int s : L.b) o << "v[" << s << "], ";
  for (int s : L.slices) o << "v[" << s << "], ";
  o << "nullptr};\n      if (int rc = fl_p" << body.program->id << "(ctx, bi, bo, s)) return rc;\n";
  for (size_t i = 0; i < states; ++i)
    o << "      { unsigned char* t = v[" << L.a[i] << "]; v[" << L.a[i] << "] = v[" << L.b[i]
      << "]; v[" << L.b[i] << "] = t; }\n";
  for (size_t k = 0; k < L.slices.size(); ++k)
    copy(false, st.out[states + k], L.slices[k], L.outAxis[k], L.outReverse[k]);
  o << "    }\n";
  for (size_t i = 0; i < states; ++i)
    o << "    FL_CHECK(cudaMemcpyAsync(v[" << st.out[i] << "], v[" << L.a[i] << "], "
      << bytes(L.a[i]) << "LL, cudaMemcpyDeviceToDevice, s), \"copy a state out\");\n";
  o << "  }\n";
}
}  // namespace fuselens::cudaprog
