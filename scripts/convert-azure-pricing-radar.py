#!/usr/bin/env python3
"""Convert azure-pricing-radar data/latest/vm-<region>.json (Azure Retail Prices items keyed by
skuId|meterId|type|reservationTerm) into gpuplan user-quote CSV rows (docs/import-format.md).
Usage: convert-azure-pricing-radar.py OBSERVED_AT SOURCE vm-*.json > azure-gpu-vms.csv
GPU model/count per size: the Azure fetcher table (src/fetch/sources_market.cpp kAzureSizes), plus four sizes
from the Azure size pages (see TABLE).
Kept: Linux, 1 Hour, Consumption, on-demand and Spot meters; Low Priority and Windows skipped;
an on-demand meter's `savingsPlanPrice` (the fetcher keeps the 1-year savings-plan term only) is written
as a `reserved-1y` row of the same meter;
a size is matched on its name without spaces/underscores (never guessed); first meter wins."""
import json,csv,sys,re
TABLE=[("Standard_NC6s_v3","V100 SXM2 16GB",1),("Standard_NC12s_v3","V100 SXM2 16GB",2),("Standard_NC24s_v3","V100 SXM2 16GB",4),("Standard_NC24rs_v3","V100 SXM2 16GB",4),("Standard_ND40rs_v2","V100 SXM2 32GB",8),("Standard_NC4as_T4_v3","T4",1),("Standard_NC8as_T4_v3","T4",1),("Standard_NC16as_T4_v3","T4",1),("Standard_NC64as_T4_v3","T4",4),("Standard_NC24ads_A100_v4","A100 PCIe 80GB",1),("Standard_NC48ads_A100_v4","A100 PCIe 80GB",2),("Standard_NC96ads_A100_v4","A100 PCIe 80GB",4),("Standard_ND96asr_v4","A100 SXM 40GB",8),("Standard_ND96amsr_A100_v4","A100 SXM 80GB",8),("Standard_NC40ads_H100_v5","H100 NVL",1),("Standard_NC80adis_H100_v5","H100 NVL",2),("Standard_ND96isr_H100_v5","H100 SXM",8),("Standard_ND96isr_H200_v5","H200 SXM",8),("Standard_ND96isr_MI300X_v5","MI300X",8),("Standard_NV36ads_A10_v5","A10",1),("Standard_NV72ads_A10_v5","A10",2),
  # Not in kAzureSizes; from the size pages (MicrosoftDocs/azure-docs articles/virtual-machines/nva10v5-series.md
  # @1710700 "Standard_NV36adms_A10_v5 | 36 | 880 | 720 | 1 | 24", and nvv3-series.md @018ad8c "powered by NVIDIA
  # Tesla M60", NV12s_v3 / NV24s_v3 / NV48s_v3 with 1 / 2 / 4 GPUs of 8 GiB, "1 GPU = one-half M60 card").
  ("Standard_NV36adms_A10_v5","A10",1),("Standard_NV12s_v3","Tesla M60",1),("Standard_NV24s_v3","Tesla M60",2),
  ("Standard_NV48s_v3","Tesla M60",4)]
norm=lambda s: re.sub(r'[ _]','',s).lower()
T={norm(a[len("Standard_"):]):(a,g,c) for a,g,c in TABLE}
OBS=sys.argv[1]; SRC=sys.argv[2]
w=csv.writer(sys.stdout,lineterminator='\n')
w.writerow("provider,instance_type,region,gpu,gpu_count,price_kind,usd_per_hour,observed_at,source,notes".split(','))
rows={}; skipped=[]
for f in sys.argv[3:]:
    d=json.load(open(f))
    for key in sorted(d):
        v=d[key]; sku=v.get('skuName') or ''
        if v.get('unitOfMeasure')!='1 Hour': continue
        if 'windows' in (v.get('productName') or '').lower(): continue
        if 'low priority' in (sku+' '+(v.get('meterName') or '')).lower(): continue
        spot='spot' in (sku+' '+(v.get('meterName') or '')).lower()
        base=re.sub(r" Spot$","",sku); base=re.sub(r"^Standard_","",base)
        t=T.get(norm(base))
        if not t: continue
        p=v.get('retailPrice')
        if not p or p<=0: continue
        k=(t[0],v['armRegionName'],'spot' if spot else 'on-demand')
        if k in rows: skipped.append((k,key,p,rows[k][0])); continue
        rows[k]=(p,key,f)
        sp=v.get('savingsPlanPrice')
        if not spot and sp is not None and sp>0:
            rows[(t[0],v['armRegionName'],'reserved-1y')]=(sp,key+' savingsPlan 1 Year',f)
for (a,r,kind),(p,key,f) in sorted(rows.items()):
    t=[x for x in TABLE if x[0]==a][0]
    w.writerow(['azure',a,r,t[1],t[2],kind,repr(p),OBS,SRC,f"meter {key}"])
print(len(rows),'rows',len(skipped),'dups',file=sys.stderr)
for s in skipped: print('dup',s,file=sys.stderr)
