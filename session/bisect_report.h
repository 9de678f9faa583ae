// Bisection: when a graph output of the compiled run is beyond the error
// rounding explains, which fused groups or which pass put it there.
//
//   --by groups: the final graph with chosen groups split back into single-op
//     kernels (passes/inline_group.h), compiled and compared each time; the
//     answer is the smallest set of groups whose split brings the output back
//     within rounding, found by halving (a single culprit among n groups costs
//     about 2·log2(n) compiles).
//   --by passes: the graph after each pass of the pipeline, compiled and
//     compared; the answer is the first pass after which the output leaves
//     its expected error.
//
// Every trial compares against one set of reference runs, and a planted fault
// (--perturb) follows its kernel's group or node into each trial, so a fault
// in a fused kernel disappears when that group is split or not yet formed.
#pragma once

#include <string>
#include <vector>

namespace fuselens {

enum class BisectBy { Groups, Passes };

struct BisectRequest {
  BisectBy by = BisectBy::Groups;
  std::string output;  // the graph output to watch; empty: every graph output
};

// One compile-and-compare of a variant of the graph.
struct BisectTrial {
  std::string what;  // "final graph", "groups 3, 7 split", "after fuse-ops{max-ops=8}"
  size_t kernels = 0;
  bool within = false;  // every watched output within rounding (tolerance)
  std::string worst;    // the worst watched output's name
  std::string status;   // its status words, as compare prints them
  double ratio = 0;     // its error over the expected (allowed) error
};

struct BisectReport {
  enum class Outcome {
    Within,     // the final graph's watched outputs are within: nothing to bisect
    Found,      // groups: `groups`; passes: `pass`
    NotFusion,  // groups: every group split and still beyond
    AtImport,   // passes: beyond before any pass ran
  };
  BisectBy by = BisectBy::Groups;
  std::string output;  // as requested
  Outcome outcome = Outcome::Within;
  std::vector<BisectTrial> trials;   // in the order they ran
  std::vector<int> groups;           // Found by groups: the groups to split
  std::vector<std::string> kernels;  // and the kernels of the final graph that run them
  std::string pass;                  // Found by passes: the pass spec
  int passStep = -1;                 // its position in the pipeline (1 = first pass)

  // The sentence both faces print, e.g.
  //   FOUND: splitting group 7 (k12_fused_conv_relu) into single-op kernels brings y
  //          within rounding (9 compiles)
  //   FOUND: y leaves rounding after pass 6, fuse-ops{max-ops=8} (40× the expected error)
  //   NOT FUSION: y stays beyond rounding (40×) with every group split; compare --isolated
  //               names the kernel
  //   PASS: y is within rounding with every group fused; nothing to bisect
  std::string verdict() const;
};

}  // namespace fuselens
