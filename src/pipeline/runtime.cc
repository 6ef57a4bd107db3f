#include "reins/runtime.h"

#include "pipeline/runtime_impl.h"

namespace reins {

std::shared_ptr<Runtime::Impl::Catalog> Runtime::Impl::Build(AgentConfig config) {
  auto c = std::make_shared<Catalog>();
  c->config = std::move(config);
  c->tools = BuildToolRouter(c->config, *parts.clock, ToolBackendSources{parts.tool_backends, parts.mcp_backends});
  ModelProvider& audit = parts.audit_model ? *parts.audit_model : *parts.model;
  c->pipeline = std::make_unique<TurnPipeline>(c->config, *parts.model, audit, c->tools, *writes);
  c->deferred = std::make_unique<DeferredRunner>(c->config, c->tools, *calls, *parts.clock);
  c->deferred->key_salt = parts.idempotency_salt;
  c->deferred->on_event = [this](const std::string& session_id, const TraceEvent& e) {
    if (parts.on_event) parts.on_event(session_id, e);
  };
  c->deferred->on_notice = [this](const std::string& session_id) { cache->MayHaveNotices(session_id); };
  return c;
}

SessionRecord Runtime::Impl::NewSession(const Json& metadata, const std::string& tenant) {
  SessionRecord record;
  record.id = ids->New("s_");
  record.tenant = tenant;
  record.created_at_ms = parts.clock->NowMs();
  record.metadata = metadata.is_object() ? metadata : Json::object();
  record.state = Json();  // set where the record is written itself (CreateSession); a turn's commit writes its own
  return record;
}

void Runtime::Impl::Stored(const SessionRecord& record, std::shared_ptr<CachedSession> cached) {
  view->RememberTenant(record.id, record.tenant);
  cached->may_have_notices = false;
  cache->Remember(record.id, std::move(cached));
}

Runtime::Runtime(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Runtime::~Runtime() = default;

Result<std::unique_ptr<Runtime>> Runtime::Create(AgentConfig config, RuntimeParts parts) {
  if (!parts.model) return InvalidArgument("a runtime needs a model provider");
  if (!parts.store) return InvalidArgument("a runtime needs a store");
  if (!parts.clock) parts.clock = std::make_shared<SystemClock>();
  auto impl = std::make_unique<Impl>();
  impl->parts = std::move(parts);
  impl->ids = std::make_unique<IdSource>(impl->parts.id_seed, *impl->parts.clock);
  impl->cache = std::make_unique<SessionCache>(impl->parts.session_cache);
  Store& store = *impl->parts.store;
  impl->calls = std::make_unique<StoreCalls>(store, store.shared() ? store.concurrent_calls() : 0);
  impl->writes = std::make_unique<WriteLedger>(*impl->calls, *impl->parts.clock);
  impl->catalog = impl->Build(std::move(config));
  impl->view = std::make_unique<SessionView>(store, *impl->parts.clock);
  impl->commits = std::make_unique<CommitQueue>(*impl->calls);
  impl->claims = std::make_unique<ClaimQueue>(*impl->calls, impl->owed_releases);
  // Seeded runs (scenarios) keep their ids reproducible: the replica's name takes none of the seed's sequence.
  impl->replica_id = impl->parts.id_seed != 0 ? "r_seed" + std::to_string(impl->parts.id_seed) : impl->ids->New("r_");
  return std::unique_ptr<Runtime>(new Runtime(std::move(impl)));
}

std::shared_ptr<const AgentConfig> Runtime::config() const {
  std::shared_ptr<Impl::Catalog> current = impl_->Current();
  return std::shared_ptr<const AgentConfig>(current, &current->config);
}
std::string Runtime::Greeting() const { return impl_->Current()->config.greeting; }

Status Runtime::ReplaceTools(std::vector<ToolDef> tools) {
  AgentConfig config = impl_->Current()->config;
  config.tools = std::move(tools);
  std::shared_ptr<Impl::Catalog> next = impl_->Build(std::move(config));
  std::lock_guard lock(impl_->mu);
  impl_->catalog = std::move(next);  // the old one lives on with whoever still holds it
  return OkStatus();
}

Store& Runtime::store() { return *impl_->parts.store; }
const SessionView& Runtime::sessions() const { return *impl_->view; }
const Clock& Runtime::clock() const { return *impl_->parts.clock; }

size_t Runtime::cached_sessions() const {
  return impl_->cache->size();
}

Result<std::string> Runtime::CreateSession(const Json& metadata, const std::string& tenant) {
  SessionRecord record = impl_->NewSession(metadata, tenant);
  record.state = SessionState{}.ToJson();
  REINS_RETURN_IF_ERROR(impl_->parts.store->CreateSession(record));
  impl_->Stored(record, std::make_shared<CachedSession>());
  return record.id;
}

// Not a coroutine: the input and the new session's record go to the heap before any
// frame holds them. The frame (with the Result it returns, about 800 bytes) then stays
// under the 1 KB over which glibc serves a block only after merging the small blocks
// freed since (malloc_consolidate), a few thousand instructions a turn.
Task<Result<StartedSession>> Runtime::StartSession(TurnInput first, const Json& metadata, const std::string& tenant) {
  return StartSession(std::make_unique<TurnInput>(std::move(first)),
                      std::make_unique<SessionRecord>(impl_->NewSession(metadata, tenant)));
}

Task<Result<StartedSession>> Runtime::StartSession(std::unique_ptr<TurnInput> first,
                                                   std::unique_ptr<SessionRecord> record) {
  std::string id = record->id;
  TurnResultBox ran = co_await Begin(std::move(first), std::move(record));
  if (!ran.result->ok()) co_return ran.result->status();
  co_return StartedSession{std::move(id), std::move(*ran.result).value()};
}

// Not a coroutine, as StartSession.
Task<TurnResultBox> Runtime::StartSessionOnHeap(std::unique_ptr<TurnInput> first, const Json& metadata,
                                                const std::string& tenant, std::string* id) {
  auto record = std::make_unique<SessionRecord>(impl_->NewSession(metadata, tenant));
  *id = record->id;
  return Begin(std::move(first), std::move(record));
}

namespace {

Task<TurnResultBox> Refused(Status why) { co_return why; }

// What every turn's input must be before its turn exists (RunTurnOnHeap, Begin).
Status CheckInput(const TurnInput* input) {
  return input == nullptr ? InvalidArgument("a turn needs an input") : CheckTurnInput(*input);
}

}  // namespace

// Not a coroutine: a session written in its turn's commit is settled by the turn itself
// (Impl::RunTurn lets go of it however the turn ends), so no frame waits here.
Task<TurnResultBox> Runtime::Begin(std::unique_ptr<TurnInput> first, std::unique_ptr<SessionRecord> record) {
  if (Status malformed = CheckInput(first.get()); !malformed.ok()) return Refused(std::move(malformed));
  if (impl_->calls->store().shared() || first->on_event) return CreateThenRun(std::move(first), std::move(record));
  std::string id = record->id;
  auto fresh = std::make_shared<CachedSession>();
  fresh->may_have_notices = false;
  fresh->unwritten = std::move(record);
  impl_->cache->HoldUnwritten(id, std::move(fresh));
  return impl_->RunTurn(std::move(id), std::move(first));
}

Task<TurnResultBox> Runtime::CreateThenRun(std::unique_ptr<TurnInput> first, std::unique_ptr<SessionRecord> record) {
  record->state = SessionState{}.ToJson();
  std::function<Status(Store&)> create = [&record](Store& store) { return store.CreateSession(*record); };
  REINS_CO_RETURN_IF_ERROR(co_await impl_->calls->Run(std::move(create)));
  impl_->Stored(*record, std::make_shared<CachedSession>());
  co_return co_await impl_->RunTurn(record->id, std::move(first));
}

TurnResultBox::TurnResultBox(Status refused) : result(std::make_unique<Result<TurnResult>>(std::move(refused))) {}
TurnResultBox::TurnResultBox(TurnResult ran) : result(std::make_unique<Result<TurnResult>>(std::move(ran))) {}

Task<Result<TurnResult>> Runtime::RunTurn(const std::string& session_id, TurnInput input) {
  TurnResultBox ran = co_await RunTurnOnHeap(session_id, std::move(input));
  co_return std::move(*ran.result);
}

// Not a coroutine: the input goes to the heap before any frame holds it.
Task<TurnResultBox> Runtime::RunTurnOnHeap(std::string session_id, TurnInput input) {
  return RunTurnOnHeap(std::move(session_id), std::make_unique<TurnInput>(std::move(input)));
}

// Not a coroutine: a malformed input is refused before the turn's frame exists, and the
// check's status takes no place in a frame that waits as long as the turn does.
Task<TurnResultBox> Runtime::RunTurnOnHeap(std::string session_id, std::unique_ptr<TurnInput> input) {
  if (Status malformed = CheckInput(input.get()); !malformed.ok()) return Refused(std::move(malformed));
  return impl_->RunTurn(std::move(session_id), std::move(input));
}

}  // namespace reins
