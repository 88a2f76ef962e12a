#include "data/csv_dataset.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string_view>

namespace pstrain {
namespace data {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

std::vector<std::string_view> Split(std::string_view line) {
  std::vector<std::string_view> values;
  for (;;) {
    const size_t comma = line.find(',');
    values.push_back(Trim(line.substr(0, comma)));
    if (comma == std::string_view::npos) return values;
    line.remove_prefix(comma + 1);
  }
}

Status CheckOptions(const CsvOptions& options) {
  if (options.columns.empty()) return InvalidArgument("the CSV input names no columns");
  std::set<std::string> names;
  for (const TableColumn& c : options.columns) {
    if (c.name.empty()) return InvalidArgument("a CSV column has no name");
    if (!names.insert(c.name).second) {
      return InvalidArgument("the CSV column " + c.name + " is named twice");
    }
  }
  auto label = std::find_if(options.columns.begin(), options.columns.end(),
                            [&](const TableColumn& c) { return c.name == options.label_column; });
  if (label == options.columns.end()) {
    return InvalidArgument("the label column '" + options.label_column +
                           "' is not one of the CSV columns");
  }
  if (label->numeric) {
    return InvalidArgument("the label column " + label->name + " must be a string column");
  }
  if (options.label_vocabulary.empty()) return InvalidArgument("the label vocabulary is empty");
  return OkStatus();
}

}  // namespace

CsvOptions CsvOptionsOf(const proto::CsvInputSpec& spec) {
  CsvOptions o;
  for (const auto& c : spec.column()) o.columns.push_back({c.name(), c.numeric()});
  o.label_column = spec.label_column();
  o.label_vocabulary.assign(spec.label_vocabulary().begin(), spec.label_vocabulary().end());
  return o;
}

StatusOr<TabularDataset> ReadCsvFile(const std::string& path, const CsvOptions& options) {
  PS_RETURN_IF_ERROR(CheckOptions(options));
  std::ifstream in(path);
  if (!in) return NotFound("cannot open " + path);
  TabularDataset ds;
  std::vector<int> slot;  // per file column: its index in ds.columns, -1 for the label
  for (const TableColumn& c : options.columns) {
    if (c.name == options.label_column) {
      slot.push_back(-1);
      continue;
    }
    slot.push_back(static_cast<int>(ds.columns.size()));
    ds.columns.push_back(c);
  }
  ds.numbers.resize(ds.columns.size());
  ds.strings.resize(ds.columns.size());
  ds.string_splits.resize(ds.columns.size());
  std::string line;
  for (int64_t line_number = 1; std::getline(in, line); ++line_number) {
    const std::string_view trimmed = Trim(line);
    if (trimmed.empty() || trimmed.front() == '|') continue;
    const std::vector<std::string_view> values = Split(trimmed);
    const std::string at = path + ":" + std::to_string(line_number) + ": ";
    if (values.size() != options.columns.size()) {
      return InvalidArgument(at + std::to_string(values.size()) + " values, want " +
                             std::to_string(options.columns.size()) + " (one per column)");
    }
    for (size_t i = 0; i < values.size(); ++i) {
      const TableColumn& column = options.columns[i];
      std::string_view v = values[i];
      if (slot[i] < 0) {
        if (!v.empty() && v.back() == '.') v.remove_suffix(1);
        auto it = std::find(options.label_vocabulary.begin(), options.label_vocabulary.end(), v);
        if (it == options.label_vocabulary.end()) {
          return InvalidArgument(at + "column " + column.name + ": label '" + std::string(v) +
                                 "' is not in the label vocabulary");
        }
        ds.labels.push_back(static_cast<int32_t>(it - options.label_vocabulary.begin()));
      } else if (column.numeric) {
        float x = 0;
        if (!v.empty() && v != "?") {
          const std::string text(v);
          char* end = nullptr;
          errno = 0;
          x = std::strtof(text.c_str(), &end);
          if (end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(x)) {
            return InvalidArgument(at + "column " + column.name + ": '" + text +
                                   "' is not a number");
          }
        }
        ds.numbers[slot[i]].push_back(x);
      } else {
        ds.strings[slot[i]].emplace_back(v);
      }
    }
    ++ds.count;
  }
  if (in.bad()) return IoError("reading " + path + " failed");
  if (ds.count == 0) return InvalidArgument(path + " holds no rows");
  return ds;
}

}  // namespace data
}  // namespace pstrain
