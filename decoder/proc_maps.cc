#include "decoder/proc_maps.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

namespace cmc::decoder {
namespace {

// Splits off the next space-separated field of line.
std::string_view next_field(std::string_view &line) {
  const auto begin = line.find_first_not_of(' ');
  if (begin == std::string_view::npos) {
    line = {};
    return {};
  }
  line.remove_prefix(begin);
  const auto end = std::min(line.find(' '), line.size());
  const std::string_view field = line.substr(0, end);
  line.remove_prefix(end);
  return field;
}

template <typename T> bool parse_hex(std::string_view text, T &value) {
  const auto [ptr, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value, 16);
  return ec == std::errc() && ptr == text.data() + text.size();
}

template <typename T>
bool parse_pair(std::string_view text, char separator, T &first, T &second) {
  const auto split = text.find(separator);
  return split != std::string_view::npos &&
         parse_hex(text.substr(0, split), first) &&
         parse_hex(text.substr(split + 1), second);
}

Result<Mapping> parse_line(std::string_view line) {
  Mapping m;
  const std::string_view range = next_field(line);
  m.perms = std::string(next_field(line));
  const std::string_view offset = next_field(line);
  const std::string_view device = next_field(line);
  const std::string_view inode = next_field(line);
  if (!parse_pair(range, '-', m.start, m.end) || m.perms.size() != 4 ||
      !parse_hex(offset, m.offset) ||
      !parse_pair(device, ':', m.dev_major, m.dev_minor))
    return Error{"malformed /proc maps line"};
  const auto [ptr, ec] =
      std::from_chars(inode.data(), inode.data() + inode.size(), m.inode);
  if (ec != std::errc())
    return Error{"malformed /proc maps line"};
  const auto path = line.find_first_not_of(' ');
  if (path != std::string_view::npos)
    m.path = std::string(line.substr(path));
  return m;
}

} // namespace

Result<std::vector<Mapping>> parse_maps(std::string_view text) {
  std::vector<Mapping> maps;
  while (!text.empty()) {
    const auto newline = std::min(text.find('\n'), text.size());
    const std::string_view line = text.substr(0, newline);
    text.remove_prefix(std::min(newline + 1, text.size()));
    if (line.empty())
      continue;
    auto mapping = parse_line(line);
    if (!mapping)
      return Error{fmt::format("{}: '{}'", mapping.error().message, line)};
    maps.push_back(std::move(*mapping));
  }
  return maps;
}

Result<std::uint64_t> load_bias(std::span<const Mapping> maps,
                                const FileId &exe, std::uint64_t load_base) {
  const auto found = std::find_if(maps.begin(), maps.end(), [&](const auto &m) {
    return m.offset == 0 && m.inode == exe.inode &&
           m.dev_major == exe.dev_major && m.dev_minor == exe.dev_minor;
  });
  if (found == maps.end())
    return Error{"the executable's mapping at file offset 0 is not in "
                 "/proc/PID/maps"};
  return found->start - load_base;
}

bool readable(std::span<const Mapping> maps, std::uint64_t address,
              std::uint64_t length) {
  // A range that wraps around the address space is never mapped (it would
  // otherwise end "before" it starts and count as read).
  if (length > UINT64_MAX - address)
    return false;
  std::uint64_t cursor = address;
  const std::uint64_t end = address + length;
  // Mappings are sorted by address and do not overlap.
  for (const Mapping &m : maps) {
    if (cursor >= end)
      break;
    if (m.end <= cursor)
      continue;
    if (m.start > cursor || m.perms[0] != 'r')
      return false;
    cursor = m.end;
  }
  return cursor >= end;
}

const Mapping *mapping_holding(std::span<const Mapping> maps,
                               std::uint64_t address) {
  const auto found =
      std::ranges::upper_bound(maps, address, {}, &Mapping::start);
  if (found == maps.begin() || std::prev(found)->end <= address)
    return nullptr;
  return &*std::prev(found);
}

} // namespace cmc::decoder
