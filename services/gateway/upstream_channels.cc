#include "services/gateway/upstream_channels.h"

#include "courtpiece/common/grpc_client.h"

namespace courtpiece::gateway {

std::shared_ptr<grpc::Channel> ChannelCache::For(const std::string& addr, std::string* dropped) {
  if (dropped != nullptr) dropped->clear();
  auto it = channels_.find(addr);
  if (it != channels_.end()) {
    it->second.used = ++uses_;
    return it->second.channel;
  }
  if (static_cast<int>(channels_.size()) >= channels_max_) {
    auto oldest = channels_.begin();
    for (auto c = channels_.begin(); c != channels_.end(); ++c) {
      if (c->second.used < oldest->second.used) oldest = c;
    }
    if (dropped != nullptr) *dropped = oldest->first;
    channels_.erase(oldest);
  }
  std::shared_ptr<grpc::Channel> channel =
      common::CreateGrpcChannel(addr, metrics_,
                                {.max_receive_message_bytes = message_bytes_max_,
                                 .max_send_message_bytes = message_bytes_max_});
  channels_[addr] = Cached{.channel = channel, .used = ++uses_};
  return channel;
}

}  // namespace courtpiece::gateway
