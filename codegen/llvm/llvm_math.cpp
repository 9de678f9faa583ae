// See llvm_math.h. Every function works lane-wise on vectors as on scalars:
// constants are splats, selects replace branches.
#include "codegen/llvm/llvm_math.h"

#include <llvm/IR/Intrinsics.h>

#include <cmath>
#include <cstdint>

#include "codegen/loop/loop_ir.h"

namespace fuselens {
namespace {

llvm::Value* fconst(llvm::Type* t, double v) { return llvm::ConstantFP::get(t, v); }

// ---- casts (see cast() in loop_ir.h for the semantics) ----
// The integer type of `bits` with the lane count of v.
llvm::Type* intLike(llvm::IRBuilder<>& b, llvm::Value* v, unsigned bits) {
  llvm::Type* s = b.getIntNTy(bits);
  if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(v->getType()))
    return llvm::FixedVectorType::get(s, vt->getNumElements());
  return s;
}
llvm::Type* floatLike(llvm::IRBuilder<>& b, llvm::Value* v, bool f64) {
  llvm::Type* s = f64 ? b.getDoubleTy() : b.getFloatTy();
  if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(v->getType()))
    return llvm::FixedVectorType::get(s, vt->getNumElements());
  return s;
}

// f16 bits -> f32, exactly (subnormals, inf and NaN included).
llvm::Value* halfToFloat(llvm::IRBuilder<>& b, llvm::Value* h16) {
  llvm::Type* it = intLike(b, h16, 32);
  auto ic = [&](uint64_t v) { return llvm::ConstantInt::get(it, v); };
  llvm::Value* h = b.CreateZExt(h16, it);
  llvm::Value* sign = b.CreateShl(b.CreateAnd(h, ic(0x8000)), ic(16));
  llvm::Value* e = b.CreateAnd(b.CreateLShr(h, ic(10)), ic(0x1f));
  llvm::Value* m = b.CreateAnd(h, ic(0x3ff));
  llvm::Value* normal =
      b.CreateOr(b.CreateShl(b.CreateAdd(e, ic(112)), ic(23)), b.CreateShl(m, ic(13)));
  llvm::Value* special = b.CreateOr(ic(0x7f800000), b.CreateShl(m, ic(13)));
  llvm::Type* ft = floatLike(b, h16, false);
  llvm::Value* subF = b.CreateFMul(b.CreateUIToFP(m, ft), fconst(ft, 5.9604644775390625e-8));
  llvm::Value* bits = b.CreateSelect(b.CreateICmpEQ(e, ic(31)), special, normal);
  bits = b.CreateSelect(b.CreateICmpEQ(e, ic(0)), b.CreateBitCast(subF, it), bits);
  return b.CreateBitCast(b.CreateOr(bits, sign), ft);
}

// f32 -> f16 bits, round to nearest even (the eager reference's floatToHalf).
llvm::Value* floatToHalf(llvm::IRBuilder<>& b, llvm::Value* f) {
  llvm::Type* it = intLike(b, f, 32);
  auto ic = [&](uint64_t v) { return llvm::ConstantInt::get(it, v); };
  llvm::Value* x = b.CreateBitCast(f, it);
  llvm::Value* sign = b.CreateAnd(b.CreateLShr(x, ic(16)), ic(0x8000));
  llvm::Value* ax = b.CreateAnd(x, ic(0x7fffffff));
  // Subnormal or zero: scale so one f16 subnormal ulp is 1, round to even.
  llvm::Type* ft = f->getType();
  llvm::Value* scaled = b.CreateFMul(b.CreateBitCast(ax, ft), fconst(ft, 16777216.0));
  scaled = b.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, scaled, fconst(ft, 1024.0));
  llvm::Value* sub = b.CreateFPToUI(b.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, scaled), it);
  llvm::Value* mant = b.CreateAnd(ax, ic(0x7fffff));
  llvm::Value* e = b.CreateSub(b.CreateLShr(ax, ic(23)), ic(112));
  llvm::Value* h = b.CreateOr(b.CreateShl(e, ic(10)), b.CreateLShr(mant, ic(13)));
  llvm::Value* rest = b.CreateAnd(mant, ic(0x1fff));
  llvm::Value* up = b.CreateOr(
      b.CreateICmpUGT(rest, ic(0x1000)),
      b.CreateAnd(b.CreateICmpEQ(rest, ic(0x1000)), b.CreateICmpNE(b.CreateAnd(h, ic(1)), ic(0))));
  h = b.CreateAdd(h, b.CreateZExt(up, it));  // may carry into the exponent: right
  llvm::Value* r = b.CreateSelect(b.CreateICmpULT(ax, ic(0x38800000)), sub, h);
  r = b.CreateSelect(b.CreateICmpUGE(ax, ic(0x477ff000)), ic(0x7c00), r);
  r = b.CreateSelect(b.CreateICmpUGT(ax, ic(0x7f800000)), ic(0x7e00), r);
  return b.CreateTrunc(b.CreateOr(r, sign), intLike(b, f, 16));
}

llvm::Value* bf16ToFloat(llvm::IRBuilder<>& b, llvm::Value* h16) {
  llvm::Type* it = intLike(b, h16, 32);
  return b.CreateBitCast(b.CreateShl(b.CreateZExt(h16, it), llvm::ConstantInt::get(it, 16)),
                         floatLike(b, h16, false));
}

llvm::Value* floatToBf16(llvm::IRBuilder<>& b, llvm::Value* f) {
  llvm::Type* it = intLike(b, f, 32);
  auto ic = [&](uint64_t v) { return llvm::ConstantInt::get(it, v); };
  llvm::Value* x = b.CreateBitCast(f, it);
  llvm::Value* hi = b.CreateLShr(x, ic(16));
  llvm::Value* rounded =
      b.CreateLShr(b.CreateAdd(x, b.CreateAdd(ic(0x7fff), b.CreateAnd(hi, ic(1)))), ic(16));
  llvm::Value* nan = b.CreateICmpUGT(b.CreateAnd(x, ic(0x7fffffff)), ic(0x7f800000));
  llvm::Value* r = b.CreateSelect(nan, b.CreateOr(hi, ic(0x40)), rounded);
  return b.CreateTrunc(r, intLike(b, f, 16));
}

int castIntBits(DType t) { return intBits(t) ? intBits(t) : 64; }

}  // namespace

// Cephes expf's polynomial with a cheaper reduction: exp(x) = 2^n * e^r,
// |r| <= ln2/2, e^r by a degree-7 polynomial; about 1 ulp. n is rounded by
// adding a magic number (1.5 * 2^23 + 126) whose low mantissa bits then hold
// n + 126, so 2^(n-1) is one shift of those bits, and e^r is doubled inside
// the last fma: no floor, no float-to-int conversion, no NaN guard (NaN bits
// shift to a zero scale and NaN * 0 stays NaN). Clamped to [-87.34, 89], n
// is in [-126, 128]: above 88.72 the product overflows to +inf as libm's
// does; below -86.99 (2^-125.5) the scale is 0, so results under about
// 1.7e-38 are 0 rather than subnormal, which would cost a microcode assist
// per vector and which no tolerance tells from 0. `nonPositive`: x <= 0 or
// NaN, so the upper clamp can go.
llvm::Value* emitExp(llvm::IRBuilder<>& b, llvm::Value* x, bool nonPositive) {
  llvm::Type* t = x->getType();
  if (!t->getScalarType()->isFloatTy()) return b.CreateUnaryIntrinsic(llvm::Intrinsic::exp, x);
  llvm::Type* it = llvm::Type::getInt32Ty(b.getContext());
  if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(t))
    it = llvm::FixedVectorType::get(it, vt->getNumElements());
  auto fma = [&](llvm::Value* p, llvm::Value* q, llvm::Value* r) {
    return b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {t}, {p, q, r});
  };
  // Selects, not minnum/maxnum: a NaN x must stay NaN.
  llvm::Value* xc = x;
  if (!nonPositive) xc = b.CreateSelect(b.CreateFCmpOGT(x, fconst(t, 89.0)), fconst(t, 89.0), x);
  xc = b.CreateSelect(b.CreateFCmpOLT(xc, fconst(t, -87.3365447505531)),
                      fconst(t, -87.3365447505531), xc);
  const double magic = 12582912.0 + 126.0;
  llvm::Value* big = fma(xc, fconst(t, 1.44269504088896341), fconst(t, magic));
  llvm::Value* n = b.CreateFSub(big, fconst(t, magic));
  llvm::Value* r = fma(n, fconst(t, -0.693359375), xc);
  r = fma(n, fconst(t, 2.12194440e-4), r);
  static const double p[] = {1.9875691500E-4, 1.3981999507E-3, 8.3334519073E-3,
                             4.1665795894E-2, 1.6666665459E-1, 5.0000001201E-1};
  llvm::Value* y = fconst(t, p[0]);
  for (int k = 1; k < 6; ++k) y = fma(y, r, fconst(t, p[k]));
  y = fma(y, b.CreateFMul(r, r), r);
  y = fma(y, fconst(t, 2.0), fconst(t, 2.0));  // 2 e^r, exactly twice (y + 1)
  llvm::Value* scale =
      b.CreateBitCast(b.CreateShl(b.CreateBitCast(big, it), llvm::ConstantInt::get(it, 23)), t);
  return b.CreateFMul(y, scale);
}

// 1 / d for d known finite and nonzero: LLVM may use a reciprocal estimate
// and one Newton step (about 1 ulp) where the target has one for the type,
// instead of a divide that occupies the divider for ten or more cycles per
// vector. x86 only takes that path for vectors; scalar tails divide exactly.
llvm::Value* emitRecip(llvm::IRBuilder<>& b, llvm::Value* d) {
  llvm::Value* q = b.CreateFDiv(fconst(d->getType(), 1.0), d);
  if (auto* inst = llvm::dyn_cast<llvm::Instruction>(q)) {
    llvm::FastMathFlags fm;
    fm.setAllowReciprocal();
    fm.setNoInfs();
    fm.setAllowContract();  // the Newton step as fmas
    inst->setFastMathFlags(fm);
  }
  return q;
}

// sigmoid(x) = 1 / (1 + e^-x), as s = 1 / (1 + z) with z = e^-|x| in [0, 1]:
// the divisor stays in [1, 2] (never inf, so the reciprocal estimate is safe,
// and the quotient never subnormal), and x < 0 takes z * s = e^x / (1 + e^x).
llvm::Value* emitSigmoid(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Type* t = x->getType();
  if (!t->getScalarType()->isFloatTy()) {
    llvm::Value* e = b.CreateUnaryIntrinsic(llvm::Intrinsic::exp, b.CreateFNeg(x));
    return b.CreateFDiv(fconst(t, 1.0), b.CreateFAdd(fconst(t, 1.0), e));
  }
  llvm::Value* ax = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value* z = emitExp(b, b.CreateFNeg(ax), true);
  llvm::Value* s = emitRecip(b, b.CreateFAdd(z, fconst(t, 1.0)));
  return b.CreateSelect(b.CreateFCmpOLT(x, fconst(t, 0.0)), b.CreateFMul(z, s), s);
}

// erf: an odd Taylor polynomial below |x| = 0.5 (error < 1e-8), Abramowitz &
// Stegun 7.1.26 above (absolute error < 1.5e-7), sign restored by copysign.
llvm::Value* emitErf(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Type* t = x->getType();
  llvm::Value* ax = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value* tt = b.CreateFDiv(
      fconst(t, 1.0),
      b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {t}, {ax, fconst(t, 0.3275911), fconst(t, 1.0)}));
  static const double a[] = {1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592};
  llvm::Value* p = fconst(t, a[0]);
  for (int k = 1; k < 5; ++k)
    p = b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {t}, {p, tt, fconst(t, a[k])});
  p = b.CreateFMul(p, tt);
  llvm::Value* e = emitExp(b, b.CreateFNeg(b.CreateFMul(ax, ax)), true);
  llvm::Value* big = b.CreateFSub(fconst(t, 1.0), b.CreateFMul(p, e));
  big = b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, big, x);
  // 2/sqrt(pi) * (x - x^3/3 + x^5/10 - x^7/42 + x^9/216 - x^11/1320)
  static const double q[] = {-1.0 / 1320, 1.0 / 216, -1.0 / 42, 1.0 / 10, -1.0 / 3, 1.0};
  llvm::Value* z = b.CreateFMul(x, x);
  llvm::Value* y = fconst(t, q[0]);
  for (int k = 1; k < 6; ++k)
    y = b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {t}, {y, z, fconst(t, q[k])});
  llvm::Value* small = b.CreateFMul(b.CreateFMul(y, x), fconst(t, 1.1283791670955126));
  return b.CreateSelect(b.CreateFCmpOLT(ax, fconst(t, 0.5)), small, big);
}

// Cephes tanhf: an odd polynomial below |x| = 0.625, 1 - 2 / (e^2|x| + 1) above.
llvm::Value* emitTanh(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Type* t = x->getType();
  llvm::Value* ax = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  // Above |x| = 20, 1 - 2 / (e^2|x| + 1) rounds to 1 in f32 (2 / e^40 is far
  // below half an ulp of 1), so capping the exponent at 40 changes no result.
  // Uncapped, 2 / (e + 1) turns subnormal near |x| = 44, and each vector with
  // such a lane takes a microcode assist: magika's GELU + max-pool kernel ran
  // 2x slower on 103 such lanes of 260,000. minnum keeps NaN out of the cap;
  // a NaN x still takes the polynomial branch, which stays NaN.
  llvm::Value* twoAx = b.CreateBinaryIntrinsic(llvm::Intrinsic::minnum,
                                               b.CreateFMul(ax, fconst(t, 2.0)), fconst(t, 40.0));
  llvm::Value* e = emitExp(b, twoAx);
  // e + 1 is in [2, e^40]: finite, so the reciprocal estimate is safe.
  llvm::Value* big = b.CreateIntrinsic(
      llvm::Intrinsic::fmuladd, {t},
      {fconst(t, -2.0), emitRecip(b, b.CreateFAdd(e, fconst(t, 1.0))), fconst(t, 1.0)});
  big = b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, big, x);
  static const double q[] = {-5.70498872745E-3, 2.06390887954E-2, -5.37397155531E-2,
                             1.33314422036E-1, -3.33332819422E-1};
  llvm::Value* z = b.CreateFMul(x, x);
  llvm::Value* y = fconst(t, q[0]);
  for (int k = 1; k < 5; ++k)
    y = b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {t}, {y, z, fconst(t, q[k])});
  llvm::Value* small = b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {t}, {b.CreateFMul(y, z), x, x});
  return b.CreateSelect(b.CreateFCmpOGE(ax, fconst(t, 0.625)), big, small);
}

// Cephes logf: x = m * 2^e with m in [sqrt(1/2), sqrt(2)), log(m) by a
// degree-9 polynomial in m - 1; about 1 ulp. log(0) = -inf, log(x < 0) and
// log(NaN) = NaN, log(inf) = inf; subnormals are scaled up first.
llvm::Value* emitLog(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Type* t = x->getType();
  llvm::Type* it = b.getInt32Ty();
  if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(t))
    it = llvm::FixedVectorType::get(b.getInt32Ty(), vt->getNumElements());
  auto ic = [&](int64_t v) { return llvm::ConstantInt::get(it, uint64_t(v), true); };
  llvm::Value* sub = b.CreateFCmpOLT(x, fconst(t, 1.17549435e-38));
  llvm::Value* xs = b.CreateSelect(sub, b.CreateFMul(x, fconst(t, 16777216.0)), x);
  llvm::Value* bits = b.CreateBitCast(xs, it);
  llvm::Value* e = b.CreateSub(b.CreateLShr(bits, ic(23)), ic(126));
  e = b.CreateSub(e, b.CreateSelect(sub, ic(24), ic(0)));
  llvm::Value* m =
      b.CreateBitCast(b.CreateOr(b.CreateAnd(bits, ic(0x807fffff)), ic(0x3f000000)), t);
  // m in [0.5, 1): below sqrt(1/2) use 2m and e - 1.
  llvm::Value* lowM = b.CreateFCmpOLT(m, fconst(t, 0.707106781186547524));
  llvm::Value* ef = b.CreateSIToFP(b.CreateSub(e, b.CreateZExt(lowM, it)), t);
  llvm::Value* r = b.CreateFSub(b.CreateSelect(lowM, b.CreateFAdd(m, m), m), fconst(t, 1.0));
  static const double p[] = {7.0376836292E-2,  -1.1514610310E-1, 1.1676998740E-1,
                             -1.2420140846E-1, 1.4249322787E-1,  -1.6668057665E-1,
                             2.0000714765E-1,  -2.4999993993E-1, 3.3333331174E-1};
  llvm::Value* y = fconst(t, p[0]);
  for (int k = 1; k < 9; ++k)
    y = b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {t}, {y, r, fconst(t, p[k])});
  llvm::Value* r2 = b.CreateFMul(r, r);
  y = b.CreateFMul(b.CreateFMul(y, r), r2);
  y = b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {t}, {ef, fconst(t, -2.12194440e-4), y});
  y = b.CreateFSub(y, b.CreateFMul(r2, fconst(t, 0.5)));
  y = b.CreateFAdd(r, y);
  y = b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {t}, {ef, fconst(t, 0.693359375), y});
  y = b.CreateSelect(b.CreateFCmpOEQ(x, fconst(t, INFINITY)), x, y);
  y = b.CreateSelect(b.CreateFCmpOEQ(x, fconst(t, 0.0)), fconst(t, -INFINITY), y);
  // x < 0 or NaN: NaN.
  return b.CreateSelect(b.CreateFCmpULT(x, fconst(t, 0.0)), fconst(t, NAN), y);
}

llvm::Value* emitCast(llvm::IRBuilder<>& b, llvm::Value* v, DType from, DType to) {
  if (from == to) return v;
  bool uns = from == DType::U8 || from == DType::Bool;
  if (from == DType::F16 || from == DType::BF16) {
    v = from == DType::F16 ? halfToFloat(b, v) : bf16ToFloat(b, v);
    from = DType::F32;
    if (to == DType::F32) return v;
  }
  if (to == DType::Bool)
    return isFloat(from) ? b.CreateFCmpUNE(v, llvm::Constant::getNullValue(v->getType()))
                         : b.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
  if (to == DType::F16 || to == DType::BF16) {
    v = emitCast(b, v, from, DType::F32);
    return to == DType::F16 ? floatToHalf(b, v) : floatToBf16(b, v);
  }
  if (isFloat(to)) {  // f32 or f64
    bool f64 = to == DType::F64;
    if (isFloat(from))
      return f64 ? b.CreateFPExt(v, floatLike(b, v, true))
                 : b.CreateFPTrunc(v, floatLike(b, v, false));
    // Integers of up to 32 bits convert exactly to f64, so one rounding to
    // f32 equals eager's i -> f64 -> f32; i64 goes through f64 like eager.
    if (castIntBits(from) == 64 && !f64)
      return b.CreateFPTrunc(b.CreateSIToFP(v, floatLike(b, v, true)), floatLike(b, v, false));
    return uns ? b.CreateUIToFP(v, floatLike(b, v, f64)) : b.CreateSIToFP(v, floatLike(b, v, f64));
  }
  unsigned tb = unsigned(castIntBits(to));
  if (isFloat(from)) {  // saturating truncation to i64, then the low bits
    llvm::Type* ft = v->getType();
    llvm::Type* i64 = intLike(b, v, 64);
    llvm::Value* hiC = fconst(ft, 9223372036854775808.0);
    llvm::Value* inRange = b.CreateAnd(b.CreateFCmpOLT(v, hiC),
                                       b.CreateFCmpOGT(v, fconst(ft, -9223372036854775808.0)));
    llvm::Value* safe = b.CreateSelect(inRange, v, fconst(ft, 0.0));
    llvm::Value* r = b.CreateFPToSI(safe, i64);
    r = b.CreateSelect(b.CreateFCmpOGE(v, hiC), llvm::ConstantInt::get(i64, uint64_t(INT64_MAX)),
                       r);
    r = b.CreateSelect(b.CreateFCmpOLE(v, fconst(ft, -9223372036854775808.0)),
                       llvm::ConstantInt::get(i64, uint64_t(INT64_MIN)), r);
    return tb == 64 ? r : b.CreateTrunc(r, intLike(b, v, tb));
  }
  unsigned fb = unsigned(castIntBits(from));
  if (tb == fb) return v;
  if (tb < fb) return b.CreateTrunc(v, intLike(b, v, tb));
  return uns ? b.CreateZExt(v, intLike(b, v, tb)) : b.CreateSExt(v, intLike(b, v, tb));
}

}  // namespace fuselens
