// The sweep glue both faces call, so the Buckets panel and `run --sweep`
// cannot drift apart in what they accept or how they count.
#include "session/sweep_buckets.h"

#include <algorithm>
#include <cstdio>

#include "session/session.h"

namespace fuselens {

Expected<SweepRequest> makeSweepRequest(const SweepOptions& o) {
  if (o.padCheck && o.buckets.empty())
    return Status::error("--pad-check checks padding; give --buckets", "--pad-check");
  auto spec = parseSweepSpec(o.sweep);
  if (!spec) return spec.status();
  SweepRequest request;
  request.sweep = *spec;
  request.pipeline = o.pipeline;
  request.seed = o.seed;
  request.checkEager = o.checkEager;
  request.padCheck = o.padCheck;
  request.dynamic = o.dynamic;
  if (o.dynamic && !o.buckets.empty())
    return Status::error("symbolic kernels run every length unpadded: give --dynamic or --buckets",
                         "--dynamic");
  if (!o.buckets.empty()) {
    int64_t top = 1;
    for (int64_t v : spec->values) top = std::max(top, v);
    auto buckets = parseBuckets(o.buckets, spec->dim, top);
    if (!buckets) return buckets.status();
    request.buckets = *buckets;
  }
  return request;
}

Expected<std::vector<int64_t>> parseBucketPolicy(const std::string& text, const std::string& dim,
                                                 int64_t upTo) {
  const bool named = text.find('=') != std::string::npos;
  return parseBuckets(named ? text : dim + "=" + text, dim, upTo);
}

std::optional<int64_t> bucketOf(const std::vector<int64_t>& buckets, int64_t value) {
  for (int64_t b : buckets)  // ascending, as parseBuckets returns them
    if (b >= value) return b;
  return std::nullopt;
}

Expected<SweepReport> sweepModel(const std::string& model,
                                 const std::map<std::string, int64_t>& dims,
                                 const SweepRequest& request, const SweepObserver& observer,
                                 const CancelToken& cancel) {
  OpenRequest open{model, dims, {}, ""};
  open.dims.erase(request.sweep.dim);
  Session session;
  FL_RETURN_IF_ERROR(session.open(open, {}, cancel));
  return runSweep(session.original(), model, request, observer, cancel);
}

std::string BucketRow::str() const {
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "bucket %lld: %zu run%s, %zu compile%s (%zu cache hit%s), compile %.3g s, "
                "padding waste %.1f%%, ",
                (long long)bucket, runs, runs == 1 ? "" : "s", compiles, compiles == 1 ? "" : "s",
                cacheHits, cacheHits == 1 ? "" : "s", compileSeconds, paddingWaste * 100);
  return buf + (verdict == "-" ? std::string("not checked against eager") : verdict);
}

std::vector<BucketRow> bucketRows(const SweepReport& report) {
  std::vector<BucketRow> rows;
  std::map<int64_t, std::pair<int64_t, int64_t>> elements;  // bucket -> padded, all
  for (const SweepRun& r : report.runs) {
    auto it = std::find_if(rows.begin(), rows.end(), [&](auto& b) { return b.bucket == r.bucket; });
    if (it == rows.end()) it = rows.insert(rows.end(), BucketRow{r.bucket, 0, 0, 0, 0, 0, "-"});
    ++it->runs;
    if (r.compiled) ++it->compiles, it->compileSeconds += r.compileSeconds;
    if (r.cacheHit) ++it->cacheHits;
    elements[r.bucket].first += r.paddedElements;
    elements[r.bucket].second += r.elements;
    std::string verdict = r.match ? r.verdict : "-";
    if (r.padMatch) verdict += ", padded eager " + r.padVerdict;
    // The first run that misses speaks for its bucket; else the first run.
    const bool miss = r.match == false || r.padMatch == false;
    if (it->runs == 1 || (miss && it->verdict.find("within rounding") == 0)) it->verdict = verdict;
  }
  for (BucketRow& row : rows) {
    const auto [padded, all] = elements[row.bucket];
    row.paddingWaste = all ? double(padded) / double(all) : 0;
  }
  return rows;
}

}  // namespace fuselens
