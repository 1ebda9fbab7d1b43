#include "app/render/dot_svg.h"

#include <graphviz/gvc.h>

#include <cstdlib>
#include <memory>
#include <string_view>

#include <fmt/format.h>

#ifdef __SANITIZE_ADDRESS__
// What LeakSanitizer leaves out at exit, in cmc's ASan build (GCC defines
// the macro): Graphviz 2.42's libgvc and the fontconfig it loads keep what
// they read (fonts, plugins) for the process's life and never free it, so
// every check that draws a graph would report them.
extern "C" const char *__lsan_default_suppressions() {
  return "leak:libgvc.so\nleak:libfontconfig.so\n";
}
// And it says nothing of them: a check's stderr is its own.
extern "C" const char *__lsan_default_options() {
  return "print_suppressions=0";
}
#endif

namespace cmc::app {
namespace {

struct ContextFree {
  void operator()(GVC_t *context) const { gvFreeContext(context); }
};
using Context = std::unique_ptr<GVC_t, ContextFree>;

struct GraphClose {
  void operator()(Agraph_t *graph) const { agclose(graph); }
};
using Graph = std::unique_ptr<Agraph_t, GraphClose>;

struct RenderDataFree {
  void operator()(char *data) const { gvFreeRenderData(data); }
};
using RenderData = std::unique_ptr<char, RenderDataFree>;

// A graph laid out in a context: the layout is freed before the graph.
class Layout {
public:
  Layout(GVC_t *context, Agraph_t *graph)
      : context_(context), graph_(graph),
        done_(gvLayout(context, graph, "dot") == 0) {}
  Layout(const Layout &) = delete;
  Layout &operator=(const Layout &) = delete;
  ~Layout() {
    if (done_)
      gvFreeLayout(context_, graph_);
  }
  [[nodiscard]] bool done() const { return done_; }

private:
  GVC_t *context_;
  Agraph_t *graph_;
  bool done_;
};

struct MallocFree {
  void operator()(char *text) const { std::free(text); }
};

// Graphviz's last error message, its newline cut (aglasterr mallocs it).
std::string last_error() {
  const std::unique_ptr<char, MallocFree> text(aglasterr());
  std::string message = text != nullptr ? text.get() : "";
  while (!message.empty() && message.back() == '\n')
    message.pop_back();
  return message.empty() ? "no reason given" : message;
}

} // namespace

Result<std::string> svg_of_dot(const std::string &dot) {
  // Errors are collected for aglasterr, not printed on stderr.
  agseterr(AGMAX);
  const Context context(gvContext());
  if (!context)
    return Error{"cannot start Graphviz"};
  const Graph graph(agmemread(dot.c_str()));
  if (!graph)
    return Error{
        fmt::format("Graphviz cannot read the graph: {}", last_error())};
  const Layout layout(context.get(), graph.get());
  if (!layout.done())
    return Error{
        fmt::format("Graphviz cannot lay out the graph: {}", last_error())};
  char *data = nullptr;
  unsigned length = 0;
  if (gvRenderData(context.get(), graph.get(), "svg", &data, &length) != 0)
    return Error{
        fmt::format("Graphviz cannot draw the graph as SVG: {}", last_error())};
  const RenderData owned(data);
  std::string svg(data, length);
  const auto start = svg.find("<svg");
  if (start == std::string::npos)
    return Error{"Graphviz wrote no <svg> element"};
  svg.erase(0, start);
  // An <svg> inside HTML is in the SVG namespace without naming it, so the
  // page holds no address at all.
  for (const std::string_view name :
       {R"( xmlns="http://www.w3.org/2000/svg")",
        R"( xmlns:xlink="http://www.w3.org/1999/xlink")"})
    if (const auto at = svg.find(name); at != std::string::npos)
      svg.erase(at, name.size());
  return svg;
}

} // namespace cmc::app
