#include "session/diff_align.h"

#include <deque>
#include <unordered_map>

namespace fuselens {
namespace {

using Kind = DiffLine::Kind;

std::string trimmed(const std::string& s) {
  size_t b = s.find_first_not_of(' ');
  return b == std::string::npos ? std::string() : s.substr(b);
}

// The line numbers (from 1) each diff line has in A and in B; 0 on the side
// it is not on.
void number(const std::vector<DiffLine>& lines, std::vector<size_t>& a, std::vector<size_t>& b) {
  size_t la = 0, lb = 0;
  a.assign(lines.size(), 0);
  b.assign(lines.size(), 0);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].kind != Kind::Added) a[i] = ++la;
    if (lines[i].kind != Kind::Removed) b[i] = ++lb;
  }
}

// Rows of one run of changes [h0, h1), anchored on same-node pairs that
// stand in the same order on both sides.
class HunkRows {
 public:
  HunkRows(const std::vector<DiffLine>& lines, const std::vector<size_t>& aNo,
           const std::vector<size_t>& bNo, std::vector<DiffRow>& out)
      : lines_(lines), aNo_(aNo), bNo_(bNo), out_(out) {}

  void emit(size_t h0, size_t h1) {
    std::vector<size_t> left, right;
    for (size_t i = h0; i < h1; ++i) (lines_[i].kind == Kind::Removed ? left : right).push_back(i);
    // Anchors: pairs inside the run whose added sides increase with their
    // removed sides; other pairs keep rows of their own.
    std::vector<std::pair<size_t, size_t>> anchors;
    for (size_t r : left) {
      int p = lines_[r].partner;
      if (p < 0 || size_t(p) < h0 || size_t(p) >= h1) continue;
      if (anchors.empty() || size_t(p) > anchors.back().second) anchors.emplace_back(r, size_t(p));
    }
    size_t li = 0, ri = 0;
    for (const auto& [r, a] : anchors) {
      segment(left, li, r, right, ri, a);
      DiffRow row = pairRow(r, a, lines_[r].moved ? DiffRow::Kind::Same : DiffRow::Kind::Changed);
      row.moved = lines_[r].moved;
      if (row.moved && row.left != row.right) row.kind = DiffRow::Kind::Changed;
      out_.push_back(row);
      ++li, ++ri;
    }
    segment(left, li, h1, right, ri, h1);
  }

 private:
  DiffRow pairRow(size_t r, size_t a, DiffRow::Kind kind) const {
    DiffRow row;
    row.kind = kind;
    row.left = lines_[r].text, row.leftLine = aNo_[r];
    row.right = lines_[a].text, row.rightLine = bNo_[a];
    return row;
  }

  DiffRow oneSided(size_t i) const {
    const DiffLine& l = lines_[i];
    const bool isLeft = l.kind == Kind::Removed;
    DiffRow row;
    row.kind = l.moved ? (isLeft ? DiffRow::Kind::MovedOut : DiffRow::Kind::MovedIn)
                       : (isLeft ? DiffRow::Kind::Removed : DiffRow::Kind::Added);
    (isLeft ? row.left : row.right) = l.text;
    (isLeft ? row.leftLine : row.rightLine) = isLeft ? aNo_[i] : bNo_[i];
    if (l.moved)
      (isLeft ? row.rightLine : row.leftLine) = isLeft ? bNo_[l.partner] : aNo_[l.partner];
    return row;
  }

  // Lines of both sides before the next anchor (`leftEnd`, `rightEnd`): lines
  // paired elsewhere keep a row of their own, free lines share rows in order.
  void segment(const std::vector<size_t>& left, size_t& li, size_t leftEnd,
               const std::vector<size_t>& right, size_t& ri, size_t rightEnd) {
    auto freeLine = [&](size_t i) { return lines_[i].partner < 0; };
    while ((li < left.size() && left[li] < leftEnd) ||
           (ri < right.size() && right[ri] < rightEnd)) {
      const bool hasL = li < left.size() && left[li] < leftEnd;
      const bool hasR = ri < right.size() && right[ri] < rightEnd;
      if (hasL && !freeLine(left[li])) {
        out_.push_back(oneSided(left[li++]));
      } else if (hasR && !freeLine(right[ri])) {
        out_.push_back(oneSided(right[ri++]));
      } else if (hasL && hasR) {
        out_.push_back(pairRow(left[li++], right[ri++], DiffRow::Kind::Changed));
      } else {
        out_.push_back(oneSided(hasL ? left[li++] : right[ri++]));
      }
    }
  }

  const std::vector<DiffLine>& lines_;
  const std::vector<size_t>& aNo_;
  const std::vector<size_t>& bNo_;
  std::vector<DiffRow>& out_;
};

// Folds unchanged runs longer than head + tail + 1 rows (no head at the top,
// no tail at the bottom), as unifiedText does.
std::vector<DiffRow> fold(const std::vector<DiffRow>& rows, size_t context) {
  std::vector<DiffRow> out;
  const size_t n = rows.size();
  for (size_t i = 0; i < n;) {
    if (rows[i].kind != DiffRow::Kind::Same || rows[i].moved) {
      out.push_back(rows[i++]);
      continue;
    }
    size_t j = i;
    while (j < n && rows[j].kind == DiffRow::Kind::Same && !rows[j].moved) ++j;
    const size_t head = i == 0 ? 0 : context, tail = j == n ? 0 : context;
    if (j - i > head + tail + 1) {
      out.insert(out.end(), rows.begin() + long(i), rows.begin() + long(i + head));
      DiffRow f;
      f.kind = DiffRow::Kind::Folded;
      f.folded = j - i - head - tail;
      out.push_back(f);
      out.insert(out.end(), rows.begin() + long(j - tail), rows.begin() + long(j));
    } else {
      out.insert(out.end(), rows.begin() + long(i), rows.begin() + long(j));
    }
    i = j;
  }
  return out;
}

// `s` cut to `width` bytes without splitting a UTF-8 sequence, padded when
// `pad`.
std::string column(const std::string& s, size_t width, bool pad) {
  if (s.size() <= width) return pad ? s + std::string(width - s.size(), ' ') : s;
  size_t cut = width > 3 ? width - 3 : 0;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  std::string c = s.substr(0, cut) + "...";
  return pad ? c + std::string(width - std::min(width, c.size()), ' ') : c;
}

}  // namespace

std::string lineOrigin(const std::string& line) {
  if (size_t loc = line.rfind(" loc(\""); loc != std::string::npos) {
    size_t end = line.find("\")", loc + 6);
    if (end != std::string::npos) return line.substr(loc + 6, end - loc - 6);
  }
  const std::string t = trimmed(line);
  if (t.empty() || t[0] != '%') return {};
  size_t eq = t.find(" = ");
  return eq == std::string::npos ? std::string() : t.substr(0, eq);
}

size_t markMoves(std::vector<DiffLine>& lines) {
  std::unordered_map<std::string, std::deque<size_t>> byText, byOrigin;
  std::vector<std::string> origin(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].kind == Kind::Same) continue;
    origin[i] = lineOrigin(lines[i].text);
    if (origin[i].empty() || lines[i].kind != Kind::Added) continue;
    byText[trimmed(lines[i].text)].push_back(i);
    byOrigin[origin[i]].push_back(i);
  }
  auto take = [&](std::deque<size_t>& q) -> int {
    while (!q.empty() && lines[q.front()].partner >= 0) q.pop_front();
    if (q.empty()) return -1;
    size_t i = q.front();
    q.pop_front();
    return int(i);
  };
  auto pair = [&](size_t r, int a, bool moved) {
    lines[r].partner = a, lines[size_t(a)].partner = int(r);
    lines[r].moved = lines[size_t(a)].moved = moved;
  };
  size_t moved = 0;
  for (size_t r = 0; r < lines.size(); ++r) {
    if (lines[r].kind != Kind::Removed || origin[r].empty()) continue;
    auto it = byText.find(trimmed(lines[r].text));
    if (it == byText.end()) continue;
    if (int a = take(it->second); a >= 0) pair(r, a, true), ++moved;
  }
  for (size_t r = 0; r < lines.size(); ++r) {
    if (lines[r].kind != Kind::Removed || origin[r].empty() || lines[r].partner >= 0) continue;
    auto it = byOrigin.find(origin[r]);
    if (it == byOrigin.end()) continue;
    if (int a = take(it->second); a >= 0) pair(r, a, false);
  }
  return moved;
}

std::vector<DiffRow> sideBySide(const std::vector<DiffLine>& lines, size_t context) {
  std::vector<size_t> aNo, bNo;
  number(lines, aNo, bNo);
  std::vector<DiffRow> rows;
  HunkRows hunk(lines, aNo, bNo, rows);
  for (size_t i = 0; i < lines.size();) {
    if (lines[i].kind == Kind::Same) {
      DiffRow row;
      row.left = row.right = lines[i].text;
      row.leftLine = aNo[i], row.rightLine = bNo[i];
      rows.push_back(std::move(row));
      ++i;
      continue;
    }
    size_t j = i;
    while (j < lines.size() && lines[j].kind != Kind::Same) ++j;
    hunk.emit(i, j);
    i = j;
  }
  return fold(rows, context);
}

std::string sideBySideText(const std::vector<DiffRow>& rows, size_t width) {
  auto num = [](size_t n) {
    std::string s = n ? std::to_string(n) : "";
    return std::string(s.size() < 5 ? 5 - s.size() : 0, ' ') + s + " ";
  };
  std::string out;
  for (const DiffRow& r : rows) {
    if (r.kind == DiffRow::Kind::Folded) {
      out += "@@ " + std::to_string(r.folded) + " unchanged lines @@\n";
      continue;
    }
    const char* mark = "|";
    switch (r.kind) {
      case DiffRow::Kind::Changed:
        mark = r.moved ? "m" : "~";
        break;
      case DiffRow::Kind::Removed:
        mark = "<";
        break;
      case DiffRow::Kind::Added:
        mark = ">";
        break;
      case DiffRow::Kind::MovedOut:
        mark = "<m";
        break;
      case DiffRow::Kind::MovedIn:
        mark = "m>";
        break;
      default:
        mark = r.moved ? "m" : "|";
    }
    std::string m = mark;
    m.resize(3, ' ');
    out += num(r.leftLine) + column(r.left, width, true) + " " + m + num(r.rightLine) +
           column(r.right, width, false);
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += "\n";
  }
  return out;
}

}  // namespace fuselens
