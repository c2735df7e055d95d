// GoFlow2 v2.2.6 (the newest tag the module proxy serves) has faults that lose or mis-scale real
// exporters' flows, and holes through which one datagram stops collection or files flows under
// another router's address (docs/security/goflow2.md: each hole, a reproducer, the report for
// upstream). Set-up builds it from its module source with these source fixes applied; each must
// match exactly once, so a different source fails the set-up instead of building something else.
// A replacement holds no '$': set-up applies it with String.prototype.replace.
export const goflow2Module = 'github.com/netsampler/goflow2/v2';
export const goflow2Version = 'v2.2.6';
/** Bump when a fix changes: the binary's name carries it, so every clone rebuilds. */
export const goflow2Binary = 'goflow2-v2.2.6-nettel2';

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
  // alone, as the other counters do, not by address and port (a series for each port).
  {
    file: 'decoders/netflow/templates.go',
    find: '\t"maps"\n\t"sync"\n)\n',
    replace: `\t"maps"
\t"net/netip"
\t"sync"
\t"sync/atomic"
)

// MaxTemplateFields bounds the fields the templates of one source address hold, over all its ports and
// observation domains, each template counting 8 more for its own keeping.
var MaxTemplateFields int64 = 1 << 18

// ErrorTooManyTemplates is returned when storing a template would pass its source's MaxTemplateFields.
var ErrorTooManyTemplates = fmt.Errorf("too many template fields stored for this source address (MaxTemplateFields)")

var templateBudgets sync.Map // source address -> *atomic.Int64: the template fields it holds

// SourceAddress returns the address of a template system's key ("address:port"), or the key itself.
func SourceAddress(key string) string {
\tif addrPort, err := netip.ParseAddrPort(key); err == nil {
\t\treturn addrPort.Addr().Unmap().String()
\t}
\treturn key
}

// CreateTemplateSystemFor creates an in-memory store for the templates of one source ("address:port"):
// they count against MaxTemplateFields with those of the address's other ports.
func CreateTemplateSystemFor(key string) NetFlowTemplateSystem {
\tbudget, _ := templateBudgets.LoadOrStore(SourceAddress(key), new(atomic.Int64))
\treturn &BasicTemplateSystem{
\t\ttemplates:     make(FlowBaseTemplateSet),
\t\ttemplateslock: &sync.RWMutex{},
\t\tfields:        budget.(*atomic.Int64),
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
\tif ts.fields.Add(delta) > MaxTemplateFields && delta > 0 {
\t\tts.fields.Add(-delta)
\t\treturn ErrorTooManyTemplates
\t}
\tts.templates[key] = template
\treturn nil
`,
  },
  {
    file: 'decoders/netflow/templates.go',
    find: '\tif template, ok := ts.templates[key]; ok {\n\t\tdelete(ts.templates, key)\n',
    replace: '\tif template, ok := ts.templates[key]; ok {\n\t\tts.fields.Add(-templateCost(template))\n\t\tdelete(ts.templates, key)\n',
  },
  {
    file: 'decoders/netflow/templates.go',
    find: '\ttemplates     FlowBaseTemplateSet\n\ttemplateslock *sync.RWMutex\n}\n',
    replace: '\ttemplates     FlowBaseTemplateSet\n\ttemplateslock *sync.RWMutex\n\tfields        *atomic.Int64 // template fields held by this system\'s source address (see MaxTemplateFields)\n}\n',
  },
  {
    file: 'decoders/netflow/templates.go',
    find: '\t\ttemplates:     make(FlowBaseTemplateSet),\n\t\ttemplateslock: &sync.RWMutex{},\n\t}\n\treturn ts\n',
    replace: '\t\ttemplates:     make(FlowBaseTemplateSet),\n\t\ttemplateslock: &sync.RWMutex{},\n\t\tfields:        new(atomic.Int64),\n\t}\n\treturn ts\n',
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
\t\t}
`,
  },
];
