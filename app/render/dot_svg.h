#pragma once

#include <string>

#include "util/result.h"

namespace cmc::app {

// The graph of dot (DOT text) laid out by Graphviz's dot engine, as an
// <svg> element to put inside an HTML page: without the XML prolog,
// Graphviz's comments and the DOCTYPE that names an external DTD. Fails
// for text that is not DOT, or a Graphviz without its dot layout or svg
// renderer plugins.
[[nodiscard]] Result<std::string> svg_of_dot(const std::string &dot);

} // namespace cmc::app
