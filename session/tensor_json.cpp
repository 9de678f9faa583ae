// `fuselens-cli tensor --json` (report_json.h): the inspector's numbers as
// JSON, NaN and Inf as strings (JSON has no such numbers).
#include <cmath>
#include <nlohmann/json.hpp>

#include "session/report_json.h"
#include "session/tensor_inspect.h"

namespace fuselens {
namespace {

nlohmann::json number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

}  // namespace

std::string tensorJson(const InspectedTensor& t, const std::string& side, const TensorData& shown,
                       const TensorStats& s, const Histogram& h, const TensorData* slice) {
  nlohmann::json j;
  j["name"] = t.name;
  j["producer"] = t.producer;
  j["side"] = side;
  j["dtype"] = std::string(dtypeName(shown.dtype));
  j["shape"] = shown.shape;
  j["layout"] = t.layout;
  j["note"] = t.note;
  j["stats"] = {{"count", s.count},     {"finite", s.finite},   {"nan", s.nan},
                {"pos_inf", s.posInf},  {"neg_inf", s.negInf},  {"zeros", s.zeros},
                {"min", number(s.min)}, {"max", number(s.max)}, {"mean", number(s.mean)},
                {"std", number(s.std)}};
  j["histogram"] = {
      {"lo", number(h.lo)}, {"hi", number(h.hi)}, {"counts", h.counts}, {"ignored", h.ignored}};
  if (slice) {
    nlohmann::json rows = nlohmann::json::array();
    for (int64_t r = 0; r < slice->shape[0]; ++r) {
      nlohmann::json row = nlohmann::json::array();
      for (int64_t c = 0; c < slice->shape[1]; ++c)
        row.push_back(number(slice->at(r * slice->shape[1] + c)));
      rows.push_back(std::move(row));
    }
    j["slice"] = std::move(rows);
  }
  return j.dump(2);
}

}  // namespace fuselens
