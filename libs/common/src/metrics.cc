#include "courtpiece/common/metrics.h"

#include <exception>
#include <utility>

#include "absl/strings/str_cat.h"
#include "courtpiece/common/absl_compat.h"
#include "courtpiece/common/check.h"
#include "prometheus/text_serializer.h"

namespace courtpiece::common {
namespace {

bool IsValidName(std::string_view name) {
  if (name.empty() || name.front() < 'a' || name.front() > 'z') return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

const std::vector<double>& DefaultLatencyBucketsSeconds() {
  static const std::vector<double> buckets = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                              0.25,  0.5,    1,     2.5,  5,     10};
  return buckets;
}

absl::StatusOr<std::unique_ptr<Metrics>> Metrics::Create(MetricsOptions options) {
  auto metrics = std::make_unique<Metrics>(std::move(options.service));
  if (options.listen_address.empty()) return metrics;
  if (options.listen_address.find(':') == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics listen address \"", options.listen_address, "\": want host:port"));
  }
  try {
    metrics->exposer_ = std::make_unique<prometheus::Exposer>(options.listen_address, 2);
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat("metrics exposer on \"", options.listen_address,
                                               "\" failed to start: ", e.what()));
  }
  metrics->exposer_->RegisterCollectable(metrics->registry_);
  const std::vector<int> ports = metrics->exposer_->GetListeningPorts();
  if (ports.empty()) {
    return absl::UnavailableError(
        absl::StrCat("metrics exposer on \"", options.listen_address, "\" has no port"));
  }
  metrics->port_ = ports.front();
  return metrics;
}

Metrics::Metrics(std::string service)
    : service_(std::move(service)), registry_(std::make_shared<prometheus::Registry>()) {
  COURTPIECE_CHECK(IsValidName(service_), "service name must be [a-z][a-z0-9_]*");
}

Metrics::~Metrics() = default;

std::string Metrics::FullName(std::string_view name, std::string_view suffix) const {
  COURTPIECE_CHECK(IsValidName(name), "metric name must be [a-z][a-z0-9_]*");
  return absl::StrCat("courtpiece_", service_, "_", ToAbsl(name), ToAbsl(suffix));
}

CounterFamily Metrics::Counter(std::string_view name, std::string_view help) {
  return CounterFamily(&prometheus::BuildCounter()
                            .Name(FullName(name, "_total"))
                            .Help(std::string(help))
                            .Register(*registry_));
}

HistogramFamily Metrics::LatencyHistogram(std::string_view name, std::string_view help,
                                          const std::vector<double>& buckets_seconds) {
  return HistogramFamily(&prometheus::BuildHistogram()
                              .Name(FullName(name, "_seconds"))
                              .Help(std::string(help))
                              .Register(*registry_),
                         buckets_seconds);
}

GaugeFamily Metrics::Gauge(std::string_view name, std::string_view help) {
  return GaugeFamily(&prometheus::BuildGauge()
                          .Name(FullName(name, ""))
                          .Help(std::string(help))
                          .Register(*registry_));
}

std::string Metrics::Serialize() const {
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

}  // namespace courtpiece::common
