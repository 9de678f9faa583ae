// Errors as values. A Diagnostic says what went wrong and where (node, value,
// file position); Status carries one or none; Expected<T> carries a value or a
// Diagnostic. Bad user input travels up as these and never aborts the process.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace fuselens {

enum class Severity { Note, Warning, Error };

struct Diagnostic {
  Severity severity = Severity::Error;
  std::string where;    // "node 'fc1' (MatMul)", "model.onnx", "line 3, column 7"
  std::string message;  // one sentence a user can act on

  // "where: message", or just the message when no place is known.
  std::string str() const { return where.empty() ? message : where + ": " + message; }
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status ok() { return Status(); }
  static Status error(std::string message, std::string where = {}) {
    Status s;
    s.diag_ = Diagnostic{Severity::Error, std::move(where), std::move(message)};
    return s;
  }
  static Status fromDiagnostic(Diagnostic d) {
    Status s;
    s.diag_ = std::move(d);
    return s;
  }
  bool isOk() const { return !diag_.has_value(); }
  explicit operator bool() const { return isOk(); }
  const Diagnostic& diagnostic() const {
    assert(diag_ && "diagnostic() on an ok Status");
    return *diag_;
  }
  std::string message() const { return diag_ ? diag_->str() : std::string("ok"); }

 private:
  std::optional<Diagnostic> diag_;
};

template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}
  Expected(Status status) : v_(std::move(status)) {
    assert(!std::get<Status>(v_).isOk() && "Expected built from an ok Status has no value");
  }
  static Expected error(std::string message, std::string where = {}) {
    return Expected(Status::error(std::move(message), std::move(where)));
  }
  bool isOk() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return isOk(); }
  T& value() & {
    assert(isOk() && "value() on an error");
    return std::get<T>(v_);
  }
  const T& value() const& {
    assert(isOk() && "value() on an error");
    return std::get<T>(v_);
  }
  T&& value() && {
    assert(isOk() && "value() on an error");
    return std::get<T>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  Status status() const { return isOk() ? Status::ok() : std::get<Status>(v_); }
  const Diagnostic& diagnostic() const { return std::get<Status>(v_).diagnostic(); }
  std::string message() const { return status().message(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace fuselens

// Early return of an error Status/Expected from a function returning Status or Expected<U>.
#define FL_RETURN_IF_ERROR(expr)               \
  do {                                         \
    ::fuselens::Status fl_status_ = (expr);    \
    if (!fl_status_.isOk()) return fl_status_; \
  } while (0)
