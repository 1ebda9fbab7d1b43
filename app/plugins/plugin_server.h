#pragma once

namespace cmc::app {

// The plugin host's side (app/plugins/plugin_host.h): `cmc plugin-host FILE`,
// with its socket to cmc on fd 3. Loads the plugin, says whether it could, then
// answers each request with the verdict of the plugin's check until cmc
// closes its end. Returns the host's exit status.
int run_plugin_server(const char *plugin);

} // namespace cmc::app
