// GoFlow2 v2.2.6 (the newest tag the module proxy serves) has two faults that
// lose or mis-scale real exporters' flows. Set-up builds it from its module
// source with these two source fixes applied; each must match exactly once,
// so a different source fails the set-up instead of building something else.
export const goflow2Module = 'github.com/netsampler/goflow2/v2';
export const goflow2Version = 'v2.2.6';
/** Bump when a fix changes: the binary's name carries it, so every clone rebuilds. */
export const goflow2Binary = 'goflow2-v2.2.6-nettel1';

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
];
