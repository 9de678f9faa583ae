// Codegen's dispatch table: for every op with code generation, how it becomes
// loop IR and which dtypes it takes. The compute class comes from the op's row
// in the op registry (computeClassOf); the class picks the table:
//   Elementwise  elementwise_rows.cpp: an expression over indexed operands
//   IndexMap     kIndexMapRows: the input position an output position reads
//   Injective    kInjectiveRows: the value at an output index
//   Reduction    kReductionRows: a loop nest of its own
// A test checks that every computable op of the registry has its row.
#pragma once

#include <string_view>

#include "codegen/lower/compute.h"

namespace fuselens {

// The dtypes of a row's data values (f16/bf16 are widened to f32 in the kernel,
// integers to i64).
enum class DTypeSet : uint8_t {
  Float,       // f32, f16, bf16
  FloatOrInt,  // and the integers, not bool
  Any,         // any dtype: data moved, never computed on
};
bool dtypeIn(DTypeSet set, DType t);

using ReductionFn = std::vector<StmtRef> (*)(KernelBuilder&, const Node&,
                                             const KernelBuilder::Sink&);
using InjectiveFn = ExprRef (*)(KernelBuilder&, const Node&, size_t output, const Index&);
using IndexMapFn = Index (*)(KernelBuilder&, const Node&, const Index& out);

struct IndexMapRow {
  std::string_view domain, op;
  IndexMapFn source;  // the input position an output position reads
};

struct ReductionRow {
  std::string_view domain, op;
  ReductionFn lower;
  DTypeSet dtypes;
};
struct InjectiveRow {
  std::string_view domain, op;
  InjectiveFn value;
  DTypeSet dtypes;
};

// n's row, or null when the table has none for its domain and op.
const ReductionRow* reductionRow(const Node& n);
const InjectiveRow* injectiveRow(const Node& n);
const IndexMapRow* indexMapRow(const Node& n);

}  // namespace fuselens
