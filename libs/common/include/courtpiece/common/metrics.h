// Prometheus metrics for one service, over prometheus-cpp, with the house naming:
//   counters    courtpiece_<service>_<name>_total
//   histograms  courtpiece_<service>_<name>_seconds   (latencies, in seconds)
//   gauges      courtpiece_<service>_<name>
//
//   ASSIGN_OR_RETURN(auto metrics, Metrics::Create({.service = "lobby",
//                                                    .listen_address = "127.0.0.1:9464"}));
//   CounterFamily joins = metrics->Counter("joins", "Table joins by result.");
//   joins.WithLabels({{"result", "ok"}}).Increment();
//   HistogramFamily latency = metrics->LatencyHistogram("pg_query", "Postgres query time.");
//   latency.WithLabels({{"query", "insert_player"}}).Observe(0.004);
//   { ScopedLatency timer(latency.WithLabels({{"query", "select"}})); ... }
//
// Names (service and metric) are [a-z0-9_] and start with a letter; a bad name or label name
// is a programmer error (assertion). Asking twice for the same family returns the same one.
// With a listen_address, an HTTP exposer serves GET /metrics there; port 0 picks a free port,
// reported by port().
// Thread-safety: every method is safe from many threads (prometheus-cpp locks internally);
// references returned stay valid for the Metrics' lifetime.
#ifndef COURTPIECE_COMMON_METRICS_H_
#define COURTPIECE_COMMON_METRICS_H_

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "prometheus/counter.h"
#include "prometheus/exposer.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/labels.h"
#include "prometheus/registry.h"

namespace courtpiece::common {

struct MetricsOptions {
  std::string service = "";         // e.g. "lobby"; becomes part of every metric name
  std::string listen_address = "";  // "host:port" for GET /metrics; empty means no HTTP server
};

// 1 ms .. 10 s: 0.001 0.0025 0.005 0.01 0.025 0.05 0.1 0.25 0.5 1 2.5 5 10.
const std::vector<double>& DefaultLatencyBucketsSeconds();

class CounterFamily {
 public:
  explicit CounterFamily(prometheus::Family<prometheus::Counter>* family) : family_(family) {}
  // The series with exactly these labels (created at 0 on first use).
  prometheus::Counter& WithLabels(const prometheus::Labels& labels) { return family_->Add(labels); }
  prometheus::Family<prometheus::Counter>& family() { return *family_; }

 private:
  prometheus::Family<prometheus::Counter>* family_;
};

class HistogramFamily {
 public:
  HistogramFamily(prometheus::Family<prometheus::Histogram>* family, std::vector<double> buckets)
      : family_(family), buckets_(std::move(buckets)) {}
  prometheus::Histogram& WithLabels(const prometheus::Labels& labels) {
    return family_->Add(labels, buckets_);
  }
  prometheus::Family<prometheus::Histogram>& family() { return *family_; }

 private:
  prometheus::Family<prometheus::Histogram>* family_;
  std::vector<double> buckets_;
};

class GaugeFamily {
 public:
  explicit GaugeFamily(prometheus::Family<prometheus::Gauge>* family) : family_(family) {}
  prometheus::Gauge& WithLabels(const prometheus::Labels& labels) { return family_->Add(labels); }
  prometheus::Family<prometheus::Gauge>& family() { return *family_; }

 private:
  prometheus::Family<prometheus::Gauge>* family_;
};

// Observes the seconds from construction to destruction (steady clock; metrics only, never
// for decisions) into `histogram`, which must outlive it.
class ScopedLatency {
 public:
  explicit ScopedLatency(prometheus::Histogram& histogram)
      : histogram_(histogram), start_(std::chrono::steady_clock::now()) {}
  ~ScopedLatency() {
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start_;
    histogram_.Observe(elapsed.count());
  }
  ScopedLatency(const ScopedLatency&) = delete;
  ScopedLatency& operator=(const ScopedLatency&) = delete;

 private:
  prometheus::Histogram& histogram_;
  std::chrono::steady_clock::time_point start_;
};

class Metrics {
 public:
  // Starts the HTTP exposer when options.listen_address is set. A bad address or a port in
  // use is Unavailable (or InvalidArgument for a malformed address).
  static absl::StatusOr<std::unique_ptr<Metrics>> Create(MetricsOptions options);
  // A registry without HTTP (unit tests, tools).
  explicit Metrics(std::string service);
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  const std::string& service() const { return service_; }
  prometheus::Registry& registry() { return *registry_; }
  // The port the exposer listens on; 0 when there is none.
  int port() const { return port_; }

  CounterFamily Counter(std::string_view name, std::string_view help);
  HistogramFamily LatencyHistogram(
      std::string_view name, std::string_view help,
      const std::vector<double>& buckets_seconds = DefaultLatencyBucketsSeconds());
  GaugeFamily Gauge(std::string_view name, std::string_view help);

  // The registry in Prometheus text format (what GET /metrics returns, minus exposer stats).
  std::string Serialize() const;

 private:
  std::string FullName(std::string_view name, std::string_view suffix) const;

  std::string service_;
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  int port_ = 0;
};

}  // namespace courtpiece::common

#endif  // COURTPIECE_COMMON_METRICS_H_
