// The per-thread body pipeline (body_pipeline.h).
#include "codegen/driver/body_pipeline.h"

namespace fuselens {
namespace {
thread_local std::shared_ptr<const BodyPipeline> current;
}  // namespace

std::shared_ptr<const BodyPipeline> bodyPipeline() { return current; }

ScopedBodyPipeline::ScopedBodyPipeline(std::shared_ptr<const BodyPipeline> p)
    : saved_(std::move(current)) {
  current = std::move(p);
}

ScopedBodyPipeline::~ScopedBodyPipeline() { current = std::move(saved_); }

}  // namespace fuselens
