package readonly

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
)

var convertor = TableConvertor{
	Columns: []metav1.TableColumnDefinition{{Name: "Name", Type: "string"}, {Name: "Value", Type: "string", Priority: 1}},
	Cells: func(obj runtime.Object) ([]interface{}, error) {
		c, ok := obj.(*corev1.ConfigMap)
		if !ok {
			return nil, fmt.Errorf("not a ConfigMap: %T", obj)
		}
		return []interface{}{c.Name, c.Data["v"]}, nil
	},
}

func rows(t *metav1.Table) [][]interface{} {
	out := [][]interface{}{}
	for _, r := range t.Rows {
		out = append(out, r.Cells)
	}
	return out
}

func TestConvertToTable(t *testing.T) {
	one := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", ResourceVersion: "5"}, Data: map[string]string{"v": "1"}}
	remaining := int64(3)
	list := &corev1.ConfigMapList{
		ListMeta: metav1.ListMeta{ResourceVersion: "9", Continue: "token", RemainingItemCount: &remaining},
		Items:    []corev1.ConfigMap{*one, {ObjectMeta: metav1.ObjectMeta{Name: "b"}, Data: map[string]string{"v": "2"}}},
	}
	bookmark := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "11"}}

	tests := []struct {
		name        string
		obj         runtime.Object
		options     runtime.Object
		wantRows    [][]interface{}
		wantRV      string
		wantHeaders bool
	}{
		{name: "single object", obj: one, wantRows: [][]interface{}{{"a", "1"}}, wantRV: "5", wantHeaders: true},
		{name: "list", obj: list, wantRows: [][]interface{}{{"a", "1"}, {"b", "2"}}, wantRV: "9", wantHeaders: true},
		{name: "watch bookmark has no row", obj: bookmark, wantRows: [][]interface{}{}, wantRV: "11", wantHeaders: true},
		{name: "no headers", obj: one, options: &metav1.TableOptions{NoHeaders: true}, wantRows: [][]interface{}{{"a", "1"}}, wantRV: "5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table, err := convertor.ConvertToTable(context.Background(), tt.obj, tt.options)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantRows, rows(table)); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			if table.ResourceVersion != tt.wantRV {
				t.Errorf("RV = %q, want %q", table.ResourceVersion, tt.wantRV)
			}
			if (len(table.ColumnDefinitions) > 0) != tt.wantHeaders {
				t.Errorf("headers = %v, want %v", table.ColumnDefinitions, tt.wantHeaders)
			}
		})
	}
	table, _ := convertor.ConvertToTable(context.Background(), list, nil)
	if table.Continue != "token" || table.RemainingItemCount == nil || *table.RemainingItemCount != 3 {
		t.Errorf("list metadata not carried: continue=%q remaining=%v", table.Continue, table.RemainingItemCount)
	}
	if _, err := convertor.ConvertToTable(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, nil); err == nil {
		t.Error("a wrong object type must be an error, not a panic")
	}
}

func TestAge(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(now)
	if got := Age(clk, metav1.NewTime(now.Add(-90*time.Minute))); got != "90m" {
		t.Errorf("Age = %q, want 90m", got)
	}
	if got := Age(clk, metav1.Time{}); got != "<unknown>" {
		t.Errorf("Age of no time = %q, want <unknown>", got)
	}
}
