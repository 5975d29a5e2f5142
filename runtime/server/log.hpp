// The server's log: one line per event, as text ("2026-11-26T13:52:08.123Z INFO message
// key=value …") or, with json_output, one JSON object per line (timestamp, level,
// message and the fields), to the embedding program's sink or standard error.
#pragma once

#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

namespace attend::server {

class Log {
 public:
  Log(bool json_output, std::function<void(const std::string&)> sink);
  // `fields`: a JSON object whose members follow the message.
  void write(const char* level, const std::string& message, const nlohmann::ordered_json& fields = {}) const;
  void info(const std::string& message, const nlohmann::ordered_json& fields = {}) const { write("INFO", message, fields); }
  void warn(const std::string& message, const nlohmann::ordered_json& fields = {}) const { write("WARN", message, fields); }
  void error(const std::string& message, const nlohmann::ordered_json& fields = {}) const { write("ERROR", message, fields); }

 private:
  bool json_;
  std::function<void(const std::string&)> sink_;
  mutable std::mutex mutex_;
};

}  // namespace attend::server
