-- Platform-funded requests are named `cloud_credit` (the reference's name), beside `byok`
-- for requests served with the customer's own provider key (README "BYOK"). Rows written
-- before under the old name `wallet` are renamed so reads see one vocabulary.
update requests set funding_source = 'cloud_credit' where funding_source = 'wallet';
