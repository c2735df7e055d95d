// GoFlow2 v2.2.6 (the newest tag the module proxy serves) has faults that lose or mis-scale real
// exporters' flows, and holes through which one datagram stops collection or files flows under
// another router's address (docs/security/goflow2.md: each hole, a reproducer, the report for
// upstream). Set-up builds it from its module source with these source fixes applied; each must
// match exactly once, so a different source fails the set-up instead of building something else.
// A replacement holds no '$': set-up applies it with String.prototype.replace.
export const goflow2Module = 'github.com/netsampler/goflow2/v2';
export const goflow2Version = 'v2.2.6';
/** Bump when a fix changes: the binary's name carries it, so every clone rebuilds. */
export const goflow2Binary = 'goflow2-v2.2.6-nettel3';

export const goflow2Fixes = [
  {
    // NetFlow v9's header count is the number of records (RFC 3954 §5.1), but v2.2.6 reads it as a
    // number of flowsets and stops there: softflowd's datagrams (2 records in 7 flowsets) lose their
    // data flowset. The datagram's length bounds the loop instead, as it already does for IPFIX.
    file: 'decoders/netflow/netflow.go',
    find: 'for i := 0; ((i < int(size) && version == 9) || (uint16(read) < size && version == 10)) && payload.Len() > 0; i++ {',
    replace: 'for i := 0; (version == 9 || (uint16(read) < size && version == 10)) && payload.Len() > 0; i++ {',
  },
  {
    // IPFIX sampling as samplingPacketInterval (305) and samplingPacketSpace (306), RFC 5477: one packet
    // in interval+space is sampled, so the rate is (interval + space) / interval; v2.2.6 took the interval
    // (1) as the rate.
    file: 'producer/proto/producer_nf.go',
    find:
      'if found, err := NetFlowPopulate(record.OptionsValues, 305, &samplingRate); err != nil || found {\n' +
      '\t\t\t\treturn samplingRate, found, err\n',
    replace:
      'if found, err := NetFlowPopulate(record.OptionsValues, 305, &samplingRate); err != nil || found {\n' +
      '\t\t\t\tvar space uint32\n' +
      '\t\t\t\tif _, spaceErr := NetFlowPopulate(record.OptionsValues, 306, &space); spaceErr == nil && err == nil && samplingRate > 0 {\n' +
      '\t\t\t\t\tsamplingRate = (samplingRate + space) / samplingRate\n' +
      '\t\t\t\t}\n' +
      '\t\t\t\treturn samplingRate, found, err\n',
  },
  // Security (docs/security/goflow2.md). NetFlow v9 and IPFIX data sets are read record by record while
  // the set holds at least a record's size: a template whose records take 0 bytes (one field of length 0,
  // or none) made that loop endless, one 36-byte datagram spinning a core and growing memory ~250 MB/s.
  // Templates of 0-byte records are refused (an IPFIX one with no field is a Template Withdrawal, RFC 7011
  // §8.1: ignored, not stored), and the data-set loops stop on a record that read nothing.
  {
    file: 'decoders/netflow/netflow.go',
    find: '// GetTemplateSize returns the total byte length of a template\'s fixed fields.\n',
    replace: `// ErrorEmptyTemplate is returned for a template whose data records take no bytes: a data set using it
// would hold records without end.
var ErrorEmptyTemplate = fmt.Errorf("template of 0-byte records")

// MinRecordSize returns the fewest bytes a data record of these fields takes: a variable-length field
// (length 0xffff) takes at least its 1-byte length.
func MinRecordSize(fields []Field) int {
\tsize := 0
\tfor _, field := range fields {
\t\tif field.Length == 0xffff {
\t\t\tsize++
\t\t} else {
\t\t\tsize += int(field.Length)
\t\t}
\t}
\treturn size
}

// GetTemplateSize returns the total byte length of a template's fixed fields.
`,
  },
  {
    file: 'decoders/netflow/netflow.go',
    find: '\t\ttemplateRecord.Fields = fields\n\t\trecords = append(records, templateRecord)\n',
    replace: `\t\ttemplateRecord.Fields = fields
\t\tif version == 10 && templateRecord.FieldCount == 0 {
\t\t\tcontinue // an IPFIX Template Withdrawal: nothing to store
\t\t}
\t\tif MinRecordSize(fields) == 0 {
\t\t\treturn records, fmt.Errorf("TemplateSet: template %d [%w]", templateRecord.TemplateId, ErrorEmptyTemplate)
\t\t}
\t\trecords = append(records, templateRecord)
`,
  },
  {
    file: 'decoders/netflow/netflow.go',
    find: '\t\toptsTemplateRecord.Options = fields\n\n\t\trecords = append(records, optsTemplateRecord)\n\t}\n\n\treturn records, err\n',
    replace: `\t\toptsTemplateRecord.Options = fields

\t\tif MinRecordSize(optsTemplateRecord.Scopes)+MinRecordSize(optsTemplateRecord.Options) == 0 {
\t\t\treturn records, fmt.Errorf("NFv9OptionsTemplateSet: template %d [%w]", optsTemplateRecord.TemplateId, ErrorEmptyTemplate)
\t\t}
\t\trecords = append(records, optsTemplateRecord)
\t}

\treturn records, err
`,
  },
  {
    file: 'decoders/netflow/netflow.go',
    find: '\t\toptsTemplateRecord.Options = fields\n\n\t\trecords = append(records, optsTemplateRecord)\n\t}\n\n\treturn records, nil\n',
    replace: `\t\toptsTemplateRecord.Options = fields

\t\tif MinRecordSize(optsTemplateRecord.Scopes)+MinRecordSize(optsTemplateRecord.Options) == 0 {
\t\t\treturn records, fmt.Errorf("IPFIXOptionsTemplateSet: template %d [%w]", optsTemplateRecord.TemplateId, ErrorEmptyTemplate)
\t\t}
\t\trecords = append(records, optsTemplateRecord)
\t}

\treturn records, nil
`,
  },
  {
    file: 'decoders/netflow/netflow.go',
    find: '\tfor payload.Len() >= listFieldsScopesSize+listFieldsOptionSize {\n\t\tscopeValues, err := DecodeDataSetUsingFields(version, payload, listFieldsScopes)\n',
    replace: `\tfor payload.Len() > 0 && payload.Len() >= listFieldsScopesSize+listFieldsOptionSize {
\t\tremaining := payload.Len()
\t\tscopeValues, err := DecodeDataSetUsingFields(version, payload, listFieldsScopes)
`,
  },
  {
    file: 'decoders/netflow/netflow.go',
    find: '\t\t\treturn records, fmt.Errorf("OptionsDataSet: options [%w]", err)\n\t\t}\n',
    replace: `\t\t\treturn records, fmt.Errorf("OptionsDataSet: options [%w]", err)
\t\t}
\t\tif payload.Len() == remaining {
\t\t\treturn records, fmt.Errorf("OptionsDataSet: a record read no byte [%w]", ErrorEmptyTemplate)
\t\t}
`,
  },
  {
    file: 'decoders/netflow/netflow.go',
    find: '\tfor payload.Len() >= listFieldsSize {\n\t\tvalues, err := DecodeDataSetUsingFields(version, payload, listFields)\n\t\tif err != nil {\n\t\t\treturn records, fmt.Errorf("DataSet: fields [%w]", err)\n\t\t}\n',
    replace: `\tfor payload.Len() > 0 && payload.Len() >= listFieldsSize {
\t\tremaining := payload.Len()
\t\tvalues, err := DecodeDataSetUsingFields(version, payload, listFields)
\t\tif err != nil {
\t\t\treturn records, fmt.Errorf("DataSet: fields [%w]", err)
\t\t}
\t\tif payload.Len() == remaining {
\t\t\treturn records, fmt.Errorf("DataSet: a record read no byte [%w]", ErrorEmptyTemplate)
\t\t}
`,
  },
  // Security: a template's field count sized its slice before a byte of it was read, so 4 bytes claiming
  // 65535 fields allocated 786 KB. The fields must fit in what is left of the set.
  {
    file: 'decoders/netflow/netflow.go',
    find: '\t\tfields := make([]Field, int(templateRecord.FieldCount)) // max 65532 which would be 589KB\n',
    replace: `\t\tif 4*int(templateRecord.FieldCount) > payload.Len() {
\t\t\treturn records, fmt.Errorf("TemplateSet: %d fields do not fit in %d bytes", templateRecord.FieldCount, payload.Len())
\t\t}
\t\tfields := make([]Field, int(templateRecord.FieldCount)) // at most a quarter of the set's bytes
`,
  },
  {
    file: 'decoders/netflow/netflow.go',
    find: '\t\tfields := make([]Field, sizeScope) // max 16383 entries, 65KB\n',
    replace: `\t\tif 4*(sizeScope+sizeOptions) > payload.Len() {
\t\t\treturn records, fmt.Errorf("NFv9OptionsTemplateSet: %d fields do not fit in %d bytes", sizeScope+sizeOptions, payload.Len())
\t\t}
\t\tfields := make([]Field, sizeScope) // at most a quarter of the set's bytes
`,
  },
  {
    file: 'decoders/netflow/netflow.go',
    find: '\t\tfields := make([]Field, int(optsTemplateRecord.ScopeFieldCount)) // max 65532 which would be 589KB\n',
    replace: `\t\tif 4*int(optsTemplateRecord.FieldCount) > payload.Len() {
\t\t\treturn records, fmt.Errorf("IPFIXOptionsTemplateSet: %d fields do not fit in %d bytes", optsTemplateRecord.FieldCount, payload.Len())
\t\t}
\t\tfields := make([]Field, int(optsTemplateRecord.ScopeFieldCount)) // at most a quarter of the set's bytes
`,
  },
  // Security: the sFlow expanded flow sample (format 3) alone lacks the 1000-record cap of the other
  // sample formats, and sized its slice from the datagram's count: 80 bytes claiming 2^32-1 records
  // asked for 96 GiB and GoFlow2 died ("fatal error: runtime: out of memory", not a recoverable panic).
  {
    file: 'decoders/sflow/sflow.go',
    find: '\t\trecordsCount = expandedFlowSample.FlowRecordsCount\n\t\texpandedFlowSample.Records = make([]FlowRecord, recordsCount)\n',
    replace: `\t\trecordsCount = expandedFlowSample.FlowRecordsCount
\t\tif recordsCount > 1000 { // protection against ddos, as for the other sample formats
\t\t\treturn sample, &FlowError{format, seq, fmt.Errorf("too many flow records: %d", recordsCount)}
\t\t}
\t\texpandedFlowSample.Records = make([]FlowRecord, recordsCount) // max size of 1000 for protection
`,
  },
  // Security: a 24-byte NetFlow v5 header claiming 65535 records allocated them all (3 MB a datagram,
  // and as many zero records for the producer): only the records the datagram holds are made.
  {
    file: 'decoders/netflowlegacy/netflow.go',
    find: '\tpacket.Records = make([]RecordsNetFlowV5, int(packet.Count)) // maximum is 65535 which would be 3MB\n',
    replace: '\tpacket.Records = make([]RecordsNetFlowV5, min(int(packet.Count), payload.Len()/48)) // the records the datagram holds\n',
  },
  // Security: templates are kept for good, per source address and port, under ids and observation domains
  // the sender picks: 3 MB of template datagrams stored 360,000 of them (300 MB). The templates of one
  // source address (all its ports) may hold 2^18 fields, each template counting 8 more for its own
  // keeping (about 10 MB); past that its new templates are refused (a decoding error), its stored ones go
  // on working, and other sources are not affected. The templates counter labels a router by its address
  // alone, as the other counters do, not by address and port (a series for each port). A router's budget
  // lives in the router table below (netflow.Routers): it goes when the router is evicted.
  {
    file: 'decoders/netflow/templates.go',
    find: '\t"fmt"\n\t"maps"\n\t"sync"\n)\n',
    replace: `\t"container/list"
\t"fmt"
\t"maps"
\t"net/netip"
\t"sync"
\t"sync/atomic"
)

// MaxTemplateFields bounds the fields the templates of one source address hold, over all its ports and
// observation domains, each template counting 8 more for its own keeping.
var MaxTemplateFields int64 = 1 << 18

// ErrorTooManyTemplates is returned when storing a template would pass its source's MaxTemplateFields.
var ErrorTooManyTemplates = fmt.Errorf("too many template fields stored for this source address (MaxTemplateFields)")

// TemplateBudget counts the template fields the template systems of one source address hold.
type TemplateBudget struct {
\tlock   sync.Mutex
\tfields int64
\ttable  *RouterTable // where the fields count too; nil for a source that is not (or no longer) a known router
}

// add counts delta more fields, or refuses (false) when they would pass MaxTemplateFields.
func (b *TemplateBudget) add(delta int64) bool {
\tb.lock.Lock()
\tdefer b.lock.Unlock()
\tif delta > 0 && b.fields+delta > MaxTemplateFields {
\t\treturn false
\t}
\tb.fields += delta
\tif b.table != nil {
\t\tb.table.fields.Add(delta)
\t}
\treturn true
}

// retire takes the budget's fields out of its table's total: its router was evicted.
func (b *TemplateBudget) retire() {
\tb.lock.Lock()
\tdefer b.lock.Unlock()
\tif b.table != nil {
\t\tb.table.fields.Add(-b.fields)
\t\tb.table = nil
\t}
}

// SourceAddress returns the address of a template system's key ("address:port"), or the key itself.
func SourceAddress(key string) string {
\tif addrPort, err := netip.ParseAddrPort(key); err == nil {
\t\treturn addrPort.Addr().Unmap().String()
\t}
\treturn key
}

// CreateTemplateSystemFor creates an in-memory store for the templates of one source ("address:port"):
// they count against MaxTemplateFields with those of the address's other ports, and in the total of all
// routers while the address is a known router (Routers).
func CreateTemplateSystemFor(key string) NetFlowTemplateSystem {
\tbudget := &TemplateBudget{}
\tif known, ok := Routers.budgets.Load(SourceAddress(key)); ok {
\t\tbudget = known.(*TemplateBudget)
\t}
\treturn &BasicTemplateSystem{
\t\ttemplates:     make(FlowBaseTemplateSet),
\t\ttemplateslock: &sync.RWMutex{},
\t\tbudget:        budget,
\t}
}

func templateCost(template interface{}) int64 {
\tswitch t := template.(type) {
\tcase TemplateRecord:
\t\treturn 8 + int64(len(t.Fields))
\tcase NFv9OptionsTemplateRecord:
\t\treturn 8 + int64(len(t.Scopes)+len(t.Options))
\tcase IPFIXOptionsTemplateRecord:
\t\treturn 8 + int64(len(t.Scopes)+len(t.Options))
\t}
\treturn 8
}
`,
  },
  {
    file: 'decoders/netflow/templates.go',
    find: '\tkey := templateKey(version, obsDomainId, templateId)\n\tts.templates[key] = template\n\treturn nil\n',
    replace: `\tkey := templateKey(version, obsDomainId, templateId)
\tdelta := templateCost(template)
\tif old, ok := ts.templates[key]; ok {
\t\tdelta -= templateCost(old)
\t}
\tif !ts.budget.add(delta) {
\t\treturn ErrorTooManyTemplates
\t}
\tts.templates[key] = template
\treturn nil
`,
  },
  {
    file: 'decoders/netflow/templates.go',
    find: '\tif template, ok := ts.templates[key]; ok {\n\t\tdelete(ts.templates, key)\n',
    replace: '\tif template, ok := ts.templates[key]; ok {\n\t\tts.budget.add(-templateCost(template))\n\t\tdelete(ts.templates, key)\n',
  },
  {
    file: 'decoders/netflow/templates.go',
    find: '\ttemplates     FlowBaseTemplateSet\n\ttemplateslock *sync.RWMutex\n}\n',
    replace: '\ttemplates     FlowBaseTemplateSet\n\ttemplateslock *sync.RWMutex\n\tbudget        *TemplateBudget // the template fields of this system\'s source address (see MaxTemplateFields)\n}\n',
  },
  {
    file: 'decoders/netflow/templates.go',
    find: '\t\ttemplates:     make(FlowBaseTemplateSet),\n\t\ttemplateslock: &sync.RWMutex{},\n\t}\n\treturn ts\n',
    replace: '\t\ttemplates:     make(FlowBaseTemplateSet),\n\t\ttemplateslock: &sync.RWMutex{},\n\t\tbudget:        &TemplateBudget{},\n\t}\n\treturn ts\n',
  },
  // Security (issue 18, item 8): GoFlow2 kept state for every UDP source address it ever heard from, for
  // good: template systems, sampling rates and metric series, about 110 KB an address (10,500 spoofed
  // loopback senders of one NetFlow v5 datagram each took it to 1.18 GB). The router table bounds the
  // source addresses kept (-routers.max, 10,000) and the template fields they hold together
  // (-templates.maxfields, 2^22, about 160 MB): past either, the least recently seen routers are evicted,
  // and every holder of per-router state (the NetFlow pipe's template systems, the producer's sampling
  // rates, the metric series) drops theirs. Metrics of a source that is not a known router are labelled
  // "other". An evicted router is a new one when it sends again: its next templates are stored afresh.
  // State is stored and series recorded with the table read-locked and evictions run write-locked, so
  // an eviction racing a store cannot leave state behind.
  {
    file: 'decoders/netflow/templates.go',
    find: '// BasicTemplateSystem keeps templates in-memory with a RW lock.\n',
    replace: `// OtherRouter labels the metrics of a source address that is not (or no longer) a known router.
const OtherRouter = "other"

// RouterTable holds the source addresses (routers) whose state GoFlow2 keeps, least recently seen last.
type RouterTable struct {
\tlock       sync.RWMutex
\torder      *list.List // of source addresses, most recently seen first
\tentries    map[string]*list.Element
\tbudgets    sync.Map // source address -> *TemplateBudget, read by CreateTemplateSystemFor without the lock
\tevicted    []func(addr string)
\tmaxRouters int
\tmaxFields  atomic.Int64
\tfields     atomic.Int64 // template fields held by the known routers together
}

// Routers is the process's router table; main sets its bounds from flags.
var Routers = NewRouterTable(10000, 1<<22)

// NewRouterTable creates a table of at most maxRouters routers whose templates hold at most maxFields fields.
func NewRouterTable(maxRouters int, maxFields int64) *RouterTable {
\tt := &RouterTable{order: list.New(), entries: make(map[string]*list.Element)}
\tt.SetBounds(maxRouters, maxFields)
\treturn t
}

// SetBounds sets the most routers kept and the most template fields they hold together.
func (t *RouterTable) SetBounds(maxRouters int, maxFields int64) {
\tt.lock.Lock()
\tdefer t.lock.Unlock()
\tt.maxRouters = max(maxRouters, 1)
\tt.maxFields.Store(maxFields)
}

// OnEvict registers f, which drops the state it holds for an evicted router. f runs with the table
// write-locked: it must not call the table.
func (t *RouterTable) OnEvict(f func(addr string)) {
\tt.lock.Lock()
\tdefer t.lock.Unlock()
\tt.evicted = append(t.evicted, f)
}

// Seen makes addr the most recently seen router (a known one from now); past maxRouters the least
// recently seen are evicted.
func (t *RouterTable) Seen(addr string) {
\tt.lock.Lock()
\tdefer t.lock.Unlock()
\tif e, ok := t.entries[addr]; ok {
\t\tt.order.MoveToFront(e)
\t\treturn
\t}
\tt.entries[addr] = t.order.PushFront(addr)
\tt.budgets.Store(addr, &TemplateBudget{table: t})
\tfor t.order.Len() > t.maxRouters {
\t\tt.evict(t.order.Back())
\t}
}

// Trim evicts the least recently seen routers but keep while their templates hold more than maxFields.
func (t *RouterTable) Trim(keep string) {
\tif t.fields.Load() <= t.maxFields.Load() {
\t\treturn
\t}
\tt.lock.Lock()
\tdefer t.lock.Unlock()
\tfor t.fields.Load() > t.maxFields.Load() {
\t\te := t.order.Back()
\t\tif e != nil && e.Value.(string) == keep {
\t\t\te = e.Prev()
\t\t}
\t\tif e == nil {
\t\t\treturn
\t\t}
\t\tt.evict(e)
\t}
}

func (t *RouterTable) evict(e *list.Element) {
\taddr := t.order.Remove(e).(string)
\tdelete(t.entries, addr)
\tif budget, ok := t.budgets.LoadAndDelete(addr); ok {
\t\tbudget.(*TemplateBudget).retire()
\t}
\tfor _, f := range t.evicted {
\t\tf(addr)
\t}
}

// Keep runs keep, which stores state for addr, only while addr is a known router, and reports whether
// it ran: the state then goes with the router. keep must not call the table.
func (t *RouterTable) Keep(addr string, keep func()) bool {
\tt.lock.RLock()
\tdefer t.lock.RUnlock()
\tif _, ok := t.entries[addr]; !ok {
\t\treturn false
\t}
\tkeep()
\treturn true
}

// Label returns addr when it is a known router, else OtherRouter, and holds the table until done is
// called: series recorded meanwhile under the label are deleted with the router, never left behind.
func (t *RouterTable) Label(addr string) (label string, done func()) {
\tt.lock.RLock()
\tif _, ok := t.entries[addr]; !ok {
\t\taddr = OtherRouter
\t}
\treturn addr, t.lock.RUnlock
}

// Len returns the number of known routers.
func (t *RouterTable) Len() int {
\tt.lock.RLock()
\tdefer t.lock.RUnlock()
\treturn t.order.Len()
}

// BasicTemplateSystem keeps templates in-memory with a RW lock.
`,
  },
  {
    file: 'utils/templates/templates.go',
    find: '\treturn netflow.CreateTemplateSystem()\n',
    replace: '\treturn netflow.CreateTemplateSystemFor(key)\n',
  },
  {
    file: 'metrics/templates.go',
    find: '\treturn NewPromTemplateSystem(key, netflow.CreateTemplateSystem())\n',
    replace: '\treturn NewPromTemplateSystem(netflow.SourceAddress(key), netflow.CreateTemplateSystemFor(key))\n',
  },
  // Security: flow_process_nf_templates_total had a series for each observation domain and template id
  // a sender named, kept for good (200,000 series, a 28 MB /metrics, from 3 MB of datagrams). It counts
  // per router, version and type; a template's removal no longer deletes the router's count.
  {
    file: 'metrics/metrics.go',
    find: '\t\t[]string{"router", "version", "obs_domain_id", "template_id", "type"}, // options/template\n',
    replace: '\t\t[]string{"router", "version", "type"}, // options/template; no ids: the sender picks them\n',
  },
  {
    file: 'metrics/templates.go',
    find: '\t\t"router":        s.key,\n\t\t"version":       strconv.Itoa(int(version)),\n\t\t"obs_domain_id": strconv.Itoa(int(obsDomainId)),\n\t\t"template_id":   strconv.Itoa(int(templateId)),\n\t\t"type":          typeStr,\n',
    replace: '\t\t"router":  s.key,\n\t\t"version": strconv.Itoa(int(version)),\n\t\t"type":    typeStr,\n',
  },
  {
    file: 'metrics/templates.go',
    find: '\n\tif err == nil {\n\t\tlabels := s.getLabels(version, obsDomainId, templateId, template)\n\n\t\tNetFlowTemplatesStats.Delete(labels)\n\t}\n',
    replace: '',
  },
  // Security (issue 18, item 4): an sFlow flow's sampler address was the agent address written inside the
  // datagram, where NetFlow and IPFIX take the UDP source: whoever could reach the sFlow port could file
  // flows under a registered router's address. Every protocol now takes the UDP source.
  {
    file: 'producer/proto/proto.go',
    find: '\t\tflowMessageSet, err = ProcessMessageSFlowConfig(msgConv, p.cfg)\n\n\t\tp.enrich(flowMessageSet, func(fmsg *ProtoProducerMessage) {\n',
    replace: `\t\tflowMessageSet, err = ProcessMessageSFlowConfig(msgConv, p.cfg)

\t\tp.enrich(flowMessageSet, func(fmsg *ProtoProducerMessage) {
\t\t\tfmsg.SamplerAddress = sa // the UDP source, as for NetFlow: the agent address is the sender's claim
`,
  },
  // Security: datagrams whose agent is not their UDP source are counted, without an address label; the
  // agent label of the sFlow counters becomes "mismatch" for them, as each new claimed agent added
  // series for good (20,000 series from 20,000 28-byte datagrams).
  {
    file: 'metrics/producer.go',
    find: '// PromProducerWrapper wraps a producer to emit Prometheus metrics.\n',
    replace: `// SFlowAgentMismatch counts sFlow datagrams whose agent address is not their UDP source address.
var SFlowAgentMismatch = prometheus.NewCounter(prometheus.CounterOpts{
\tName:      "flow_process_sf_agent_mismatch_total",
\tHelp:      "sFlow datagrams whose agent address differs from their UDP source address (flows are attributed to the source).",
\tNamespace: NAMESPACE,
})

func init() {
\tprometheus.MustRegister(SFlowAgentMismatch)
}

// PromProducerWrapper wraps a producer to emit Prometheus metrics.
`,
  },
  {
    file: 'metrics/producer.go',
    find: '\t\tif ok {\n\t\t\tagentStr = agentIp.String()\n\t\t}\n',
    replace: `\t\tif ok {
\t\t\tagentStr = agentIp.String()
\t\t}
\t\tif !ok || agentIp.Unmap() != args.Src.Addr().Unmap() {
\t\t\tSFlowAgentMismatch.Inc()
\t\t\tagentStr = "mismatch"
\t\t} else {
\t\t\tagentStr = key // the router's label: "other" for a source that is not a known router
\t\t}
`,
  },
  // Security (issue 18, item 8), continued: the holders of per-router state. The NetFlow pipe makes a
  // datagram's source a known router once its version is one it decodes (a spoofed NetFlow v5 datagram
  // is valid anyway), and keeps a router's template systems, one per source port, while it is known; a
  // router's ports past MaxPortsPerRouter (16) drop the oldest port's templates. Template systems used
  // to be made before the version was read, one per address and port of any datagram.
  {
    file: 'utils/pipe.go',
    find: '\tkey := pkt.Src.String()\n\n\tp.templateslock.RLock()\n\ttemplates, ok := p.templates[key]\n\tp.templateslock.RUnlock()\n\tif !ok {\n\t\ttemplates = p.netFlowTemplater(key)\n\t\tp.templateslock.Lock()\n\t\tp.templates[key] = templates\n\t\tp.templateslock.Unlock()\n\t}\n\n',
    replace: '',
  },
  {
    file: 'utils/pipe.go',
    find: '\tvar version uint16\n\tif err := utils.BinaryDecoder(buf, &version); err != nil {\n\t\treturn &PipeMessageError{pkt, err}\n\t}\n',
    replace: `\tvar version uint16
\tif err := utils.BinaryDecoder(buf, &version); err != nil {
\t\treturn &PipeMessageError{pkt, err}
\t}
\tvar templates netflow.NetFlowTemplateSystem
\tif version == 5 || version == 9 || version == 10 {
\t\taddr := pkt.Src.Addr().Unmap().String()
\t\tnetflow.Routers.Seen(addr)
\t\tif version != 5 {
\t\t\ttemplates = p.templatesFor(addr, pkt.Src.String())
\t\t\tdefer netflow.Routers.Trim(addr)
\t\t}
\t}
`,
  },
  {
    file: 'utils/pipe.go',
    find: '\t\ttemplates:     make(map[string]netflow.NetFlowTemplateSystem),\n\t}\n\tp.parseConfig(cfg)\n\treturn p\n}\n',
    replace: `\t\ttemplates:     make(map[string]netflow.NetFlowTemplateSystem),
\t\tports:         make(map[string][]string),
\t}
\tp.parseConfig(cfg)
\tnetflow.Routers.OnEvict(p.dropRouter)
\treturn p
}

// MaxPortsPerRouter bounds the template systems of one source address, one per source port (a
// transport session, RFC 7011): past it, the oldest port's templates go.
var MaxPortsPerRouter = 16

// templatesFor returns the template system of a source ("address:port"), kept while its address is a
// known router (netflow.Routers); for a router evicted meanwhile, one that serves this datagram only.
func (p *NetFlowPipe) templatesFor(addr, key string) netflow.NetFlowTemplateSystem {
\tp.templateslock.RLock()
\ttemplates, ok := p.templates[key]
\tp.templateslock.RUnlock()
\tif ok {
\t\treturn templates
\t}
\tnetflow.Routers.Keep(addr, func() {
\t\tp.templateslock.Lock()
\t\tdefer p.templateslock.Unlock()
\t\tif templates, ok = p.templates[key]; ok {
\t\t\treturn
\t\t}
\t\ttemplates = p.netFlowTemplater(key)
\t\tp.templates[key] = templates
\t\tports := append(p.ports[addr], key)
\t\tif len(ports) > MaxPortsPerRouter {
\t\t\tdropTemplates(p.templates[ports[0]])
\t\t\tdelete(p.templates, ports[0])
\t\t\tports = ports[1:]
\t\t}
\t\tp.ports[addr] = ports
\t})
\tif templates == nil {
\t\ttemplates = p.netFlowTemplater(key)
\t}
\treturn templates
}

// dropTemplates removes every template of a system, so its router's budget counts them no more.
func dropTemplates(templates netflow.NetFlowTemplateSystem) {
\tfor key := range templates.GetTemplates() {
\t\t_, _ = templates.RemoveTemplate(uint16(key>>48), uint32(key>>16), uint16(key))
\t}
}

// dropRouter drops the template systems of an evicted router (its budget went with it).
func (p *NetFlowPipe) dropRouter(addr string) {
\tp.templateslock.Lock()
\tdefer p.templateslock.Unlock()
\tfor _, key := range p.ports[addr] {
\t\tdelete(p.templates, key)
\t}
\tdelete(p.ports, addr)
}
`,
  },
  {
    file: 'utils/pipe.go',
    find: '\ttemplateslock *sync.RWMutex\n\ttemplates     map[string]netflow.NetFlowTemplateSystem\n}\n',
    replace: '\ttemplateslock *sync.RWMutex\n\ttemplates     map[string]netflow.NetFlowTemplateSystem\n\tports         map[string][]string // source address -> its template systems\' keys, oldest first\n}\n',
  },
  {
    // sFlow keeps no state but metric series: a decoded datagram makes its source a known router.
    file: 'utils/pipe.go',
    find: '\tif err := sflow.DecodeMessageVersion(buf, &packet); err != nil {\n\t\treturn &PipeMessageError{pkt, err}\n\t}\n',
    replace: '\tif err := sflow.DecodeMessageVersion(buf, &packet); err != nil {\n\t\treturn &PipeMessageError{pkt, err}\n\t}\n\tnetflow.Routers.Seen(pkt.Src.Addr().Unmap().String())\n',
  },
  // The producer's sampling rates: kept per known router and dropped with it, and at most
  // MaxSamplingDomains observation domains a router (the sender picks them, a datagram each).
  {
    file: 'producer/proto/proto.go',
    find: '\tkey := args.Src.Addr().String()\n\tp.samplinglock.RLock()\n\tsampling, ok := p.sampling[key]\n\tp.samplinglock.RUnlock()\n\tif !ok {\n\t\tsampling = p.samplingRateSystem()\n\t\tp.samplinglock.Lock()\n\t\tp.sampling[key] = sampling\n\t\tp.samplinglock.Unlock()\n\t}\n',
    replace: `\tkey := args.Src.Addr().Unmap().String()
\tp.samplinglock.RLock()
\tsampling, ok := p.sampling[key]
\tp.samplinglock.RUnlock()
\tif !ok {
\t\tsampling = p.samplingRateSystem()
\t\tnetflow.Routers.Keep(key, func() {
\t\t\tp.samplinglock.Lock()
\t\t\tdefer p.samplinglock.Unlock()
\t\t\tif known, ok := p.sampling[key]; ok {
\t\t\t\tsampling = known
\t\t\t} else {
\t\t\t\tp.sampling[key] = sampling
\t\t\t}
\t\t})
\t}
`,
  },
  {
    file: 'producer/proto/proto.go',
    find: '\treturn &ProtoProducer{\n\t\tcfg:                cfg,\n\t\tsamplinglock:       &sync.RWMutex{},\n\t\tsampling:           make(map[string]SamplingRateSystem),\n\t\tsamplingRateSystem: samplingRateSystem,\n\t}, nil\n',
    replace: `\tp := &ProtoProducer{
\t\tcfg:                cfg,
\t\tsamplinglock:       &sync.RWMutex{},
\t\tsampling:           make(map[string]SamplingRateSystem),
\t\tsamplingRateSystem: samplingRateSystem,
\t}
\tnetflow.Routers.OnEvict(func(addr string) {
\t\tp.samplinglock.Lock()
\t\tdefer p.samplinglock.Unlock()
\t\tdelete(p.sampling, addr)
\t})
\treturn p, nil
`,
  },
  {
    file: 'producer/proto/producer_nf.go',
    find: '\ts.sampling[basicSamplingRateKey{\n\t\tversion:     version,\n\t\tobsDomainId: obsDomainId,\n\t}] = samplingRate\n',
    replace: `\tkey := basicSamplingRateKey{version: version, obsDomainId: obsDomainId}
\tif _, ok := s.sampling[key]; !ok && len(s.sampling) >= MaxSamplingDomains {
\t\treturn
\t}
\ts.sampling[key] = samplingRate
`,
  },
  {
    file: 'producer/proto/producer_nf.go',
    find: '// CreateSamplingSystem creates a default sampling rate system.\n',
    replace: '// MaxSamplingDomains bounds the observation domains whose sampling rate one router keeps.\nconst MaxSamplingDomains = 1024\n\n// CreateSamplingSystem creates a default sampling rate system.\n',
  },
  // The metric series: labelled by a known router's address, else "other", and deleted when it is
  // evicted, by their full label sets (a scan of every series at each eviction would let a flood of new
  // sources slow decoding). The two summaries lose their per-router label: a summary series holds about
  // 50 KB (five quantile streams), half of the 110 KB a source cost; the collector reads neither.
  {
    file: 'metrics/metrics.go',
    find: 'import (\n\t"github.com/prometheus/client_golang/prometheus"\n)\n',
    replace: `import (
\t"sync"

\t"github.com/netsampler/goflow2/v2/decoders/netflow"
\t"github.com/prometheus/client_golang/prometheus"
)

// listeners holds the local address, port and type of the listeners datagrams arrived on (a handful):
// with them an evicted router's series are deleted by their label sets.
var listeners sync.Map // [3]string{local_ip, local_port, type ("" for the dropped counters)} -> struct{}

// deleteRouterSeries deletes the series of an evicted router: every label set the recorders below make.
func deleteRouterSeries(addr string) {
\tlisteners.Range(func(key, _ any) bool {
\t\tl := key.([3]string)
\t\tif l[2] == "" {
\t\t\tdropped := prometheus.Labels{"remote_ip": addr, "local_ip": l[0], "local_port": l[1]}
\t\t\tMetricReceivedDroppedPackets.Delete(dropped)
\t\t\tMetricReceivedDroppedBytes.Delete(dropped)
\t\t\treturn true
\t\t}
\t\ttraffic := prometheus.Labels{"remote_ip": addr, "local_ip": l[0], "local_port": l[1], "type": l[2]}
\t\tMetricTrafficBytes.Delete(traffic)
\t\tMetricTrafficPackets.Delete(traffic)
\t\tDecoderErrors.Delete(prometheus.Labels{"router": addr, "name": l[2]})
\t\treturn true
\t})
\tNetFlowErrors.Delete(prometheus.Labels{"router": addr, "error": "template_not_found"})
\tfor _, version := range []string{"5", "9", "10"} {
\t\tNetFlowStats.Delete(prometheus.Labels{"router": addr, "version": version})
\t\tfor _, kind := range []string{"TemplateFlowSet", "OptionsTemplateFlowSet", "OptionsDataFlowSet", "DataFlowSet"} {
\t\t\tNetFlowSetStatsSum.Delete(prometheus.Labels{"router": addr, "version": version, "type": kind})
\t\t\tNetFlowSetRecordsStatsSum.Delete(prometheus.Labels{"router": addr, "version": version, "type": kind})
\t\t}
\t\tfor _, kind := range []string{"template", "options_template"} {
\t\t\tNetFlowTemplatesStats.Delete(prometheus.Labels{"router": addr, "version": version, "type": kind})
\t\t}
\t}
\tfor _, agent := range []string{addr, "mismatch"} {
\t\tSFlowStats.Delete(prometheus.Labels{"router": addr, "agent": agent, "version": "5"})
\t\tfor _, kind := range []string{"FlowSample", "CounterSample", "ExpandedCounterSample", "ExpandedFlowSample", "unknown"} {
\t\t\tSFlowSampleStatsSum.Delete(prometheus.Labels{"router": addr, "agent": agent, "version": "5", "type": kind})
\t\t\tSFlowSampleRecordsStatsSum.Delete(prometheus.Labels{"router": addr, "agent": agent, "version": "5", "type": kind})
\t\t}
\t}
}
`,
  },
  {
    file: 'metrics/metrics.go',
    find: 'func init() {\n',
    replace: 'func init() {\n\tnetflow.Routers.OnEvict(deleteRouterSeries)\n',
  },
  {
    file: 'metrics/metrics.go',
    find: '\t\t\tName:      "flow_traffic_size_bytes",\n\t\t\tHelp:      "Summary of packet size.",\n\t\t\tNamespace: NAMESPACE, Objectives: map[float64]float64{0.5: 0.05, 0.9: 0.01, 0.99: 0.001},\n\t\t},\n\t\t[]string{"remote_ip", "local_ip", "local_port", "type"},\n',
    replace: '\t\t\tName:      "flow_traffic_size_bytes",\n\t\t\tHelp:      "Summary of packet size.",\n\t\t\tNamespace: NAMESPACE, Objectives: map[float64]float64{0.5: 0.05, 0.9: 0.01, 0.99: 0.001},\n\t\t},\n\t\t[]string{"local_ip", "local_port", "type"}, // no remote_ip: a summary series holds ~50 KB\n',
  },
  {
    file: 'metrics/metrics.go',
    find: '\t\t\tName:      "flow_process_nf_delay_seconds",\n\t\t\tHelp:      "NetFlows time difference between time of flow and processing.",\n\t\t\tNamespace: NAMESPACE, Objectives: map[float64]float64{0.5: 0.05, 0.9: 0.01, 0.99: 0.001},\n\t\t},\n\t\t[]string{"router", "version"},\n',
    replace: '\t\t\tName:      "flow_process_nf_delay_seconds",\n\t\t\tHelp:      "NetFlows time difference between time of flow and processing.",\n\t\t\tNamespace: NAMESPACE, Objectives: map[float64]float64{0.5: 0.05, 0.9: 0.01, 0.99: 0.001},\n\t\t},\n\t\t[]string{"version"}, // no router: a summary series holds ~50 KB\n',
  },
  {
    file: 'metrics/producer.go',
    find: '\t\t\tNetFlowTimeStatsSum.With(\n\t\t\t\tprometheus.Labels{\n\t\t\t\t\t"router":  key,\n\t\t\t\t\t"version": versionStr,\n',
    replace: '\t\t\tNetFlowTimeStatsSum.With(\n\t\t\t\tprometheus.Labels{\n\t\t\t\t\t"version": versionStr,\n',
  },
  {
    file: 'metrics/producer.go',
    find: '\tkey := args.Src.Addr().Unmap().String()\n',
    replace: '\tkey, done := netflow.Routers.Label(args.Src.Addr().Unmap().String())\n\tdefer done()\n',
  },
  {
    // Traffic is counted once the datagram is decoded: its decoding may have made its source a known router.
    file: 'metrics/decoder.go',
    find: '\t\ttimeTrackStart := time.Now().UTC()\n\n\t\terr := wrapped(msg)\n\n\t\ttimeTrackStop := time.Now().UTC()\n\n',
    replace: '',
  },
  {
    file: 'metrics/decoder.go',
    find: '\t\tMetricTrafficBytes.With(\n',
    replace: `\t\ttimeTrackStart := time.Now().UTC()
\t\terr := wrapped(msg)
\t\ttimeTrackStop := time.Now().UTC()

\t\tlisteners.LoadOrStore([3]string{localIP, port, name}, struct{}{})
\t\tremote, done := netflow.Routers.Label(remote)
\t\tdefer done()

\t\tMetricTrafficBytes.With(
`,
  },
  {
    file: 'metrics/decoder.go',
    find: '\t\tMetricPacketSizeSum.With(\n\t\t\tprometheus.Labels{\n\t\t\t\t"remote_ip":  remote,\n',
    replace: '\t\tMetricPacketSizeSum.With(\n\t\t\tprometheus.Labels{\n',
  },
  {
    file: 'metrics/receiver.go',
    find: '\tport := strconv.FormatUint(uint64(pkt.Dst.Port()), 10)\n',
    replace: '\tport := strconv.FormatUint(uint64(pkt.Dst.Port()), 10)\n\tlisteners.LoadOrStore([3]string{localIP, port, ""}, struct{}{})\n\tremote, done := netflow.Routers.Label(remote)\n\tdefer done()\n',
  },
  {
    file: 'metrics/receiver.go',
    find: '\t"github.com/netsampler/goflow2/v2/utils"\n',
    replace: '\t"github.com/netsampler/goflow2/v2/decoders/netflow"\n\t"github.com/netsampler/goflow2/v2/utils"\n',
  },
  {
    file: 'metrics/templates.go',
    find: '\tlabels := s.getLabels(version, obsDomainId, templateId, template)\n\tNetFlowTemplatesStats.With(\n',
    replace: '\tlabels := s.getLabels(version, obsDomainId, templateId, template)\n\trouter, done := netflow.Routers.Label(s.key)\n\tdefer done()\n\tlabels["router"] = router\n\tNetFlowTemplatesStats.With(\n',
  },
  // The bounds as flags: -routers.max (a test sets it small) and -templates.maxfields.
  {
    file: 'cmd/goflow2/main.go',
    find: '\tVersion = flag.Bool("v", false, "Print version")\n',
    replace: `\tVersion = flag.Bool("v", false, "Print version")

\tMaxRouters        = flag.Int("routers.max", 10000, "Most source addresses (routers) whose templates, sampling rates and metric series are kept; past it the least recently seen are evicted")
\tMaxTemplateFields = flag.Int64("templates.maxfields", 1<<22, "Most template fields the routers' templates hold together; past it the least recently seen routers are evicted")
`,
  },
  {
    file: 'cmd/goflow2/main.go',
    find: 'func main() {\n\tflag.Parse()\n',
    replace: 'func main() {\n\tflag.Parse()\n\tnetflow.Routers.SetBounds(*MaxRouters, *MaxTemplateFields)\n',
  },
];
