// Fault injection (perturb.h).
#include "session/perturb.h"

#include <cmath>
#include <cstdlib>

namespace fuselens {

Expected<std::pair<std::string, double>> parsePerturbation(const std::string& text) {
  const size_t eq = text.find('=');
  if (eq != std::string::npos && eq > 0) {
    const std::string num = text.substr(eq + 1);
    char* end = nullptr;
    const double eps = std::strtod(num.c_str(), &end);
    if (!num.empty() && end && *end == 0 && std::isfinite(eps))
      return std::make_pair(text.substr(0, eq), eps);
  }
  return Status::error("--perturb '" + text + "' is not KERNEL=EPS (for example k3=1e-3)");
}

bool kernelMatches(const std::string& kernelName, const std::string& wanted) {
  return kernelName == wanted || kernelName.rfind(wanted + "_", 0) == 0;
}

Status checkPerturbations(const Perturbations& p, const std::vector<KernelInfo>& kernels) {
  for (const auto& [wanted, eps] : p) {
    bool found = false;
    for (const KernelInfo& k : kernels) found = found || kernelMatches(k.name, wanted);
    if (!found)
      return Status::error("--perturb names kernel '" + wanted +
                           "', which this compiled run does not have (kernels are k0 to k" +
                           std::to_string(kernels.empty() ? 0 : kernels.size() - 1) + ")");
  }
  return Status::ok();
}

double perturbationFor(const Perturbations& p, const std::string& kernelName) {
  for (const auto& [wanted, eps] : p)
    if (kernelMatches(kernelName, wanted)) return eps;
  return 0;
}

void perturbTensor(TensorData& t, double eps) {
  if (eps == 0 || (t.dtype != DType::F32 && t.dtype != DType::F64)) return;
  const int64_t n = t.numel();
  double sumSq = 0;
  int64_t finite = 0;
  for (int64_t i = 0; i < n; ++i)
    if (double v = t.at(i); std::isfinite(v)) sumSq += v * v, ++finite;
  // An all-zero output still gets an error: EPS itself stands in for its RMS.
  const double rms = finite > 0 && sumSq > 0 ? std::sqrt(sumSq / double(finite)) : 1.0;
  const double delta = eps * rms;
  for (int64_t i = 0; i < n; ++i) {
    const double d = (i % 2 == 0) ? delta : -delta;
    if (t.dtype == DType::F32)
      t.data<float>()[i] = float(double(t.data<float>()[i]) + d);
    else
      t.data<double>()[i] += d;
  }
}

AfterKernelHook perturbationHook(Perturbations p) {
  return [p = std::move(p)](const std::string& kernel, const std::vector<TensorData*>& outputs) {
    const double eps = perturbationFor(p, kernel);
    if (eps != 0)
      for (TensorData* t : outputs) perturbTensor(*t, eps);
  };
}

}  // namespace fuselens
