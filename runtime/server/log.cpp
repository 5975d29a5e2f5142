#include "server/log.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace attend::server {
namespace {

// UTC, to the millisecond: 2026-11-26T13:52:08.123Z
std::string timestamp() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900, utc.tm_mon + 1,
                utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, static_cast<int>(ms));
  return buffer;
}

}  // namespace

Log::Log(bool json_output, std::function<void(const std::string&)> sink) : json_(json_output), sink_(std::move(sink)) {}

void Log::write(const char* level, const std::string& message, const nlohmann::ordered_json& fields) const {
  std::string line;
  if (json_) {
    nlohmann::ordered_json j;
    j["timestamp"] = timestamp();
    j["level"] = level;
    j["message"] = message;
    if (fields.is_object())
      for (const auto& [key, value] : fields.items()) j[key] = value;
    line = j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  } else {
    line = timestamp() + " " + level + " " + message;
    if (fields.is_object())
      for (const auto& [key, value] : fields.items())
        line += " " + key + "=" + (value.is_string() ? value.get<std::string>()
                                                      : value.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (sink_) {
    sink_(line);
  } else {
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), stderr);
    std::fflush(stderr);
  }
}

}  // namespace attend::server
